"""The settings dialog: providers and keys, run defaults, the sandbox, prompt profiles,
appearance."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFontComboBox,
    QFormLayout,
    QFrame,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop.engine.config import DEFAULT_MODEL
from rlm_desktop.providers.catalog import litellm_model_names
from rlm_desktop.ui.appearance.theme import apply_fonts, apply_theme
from rlm_desktop.ui.run.controls import RunControls
from rlm_desktop.ui.settings.profiles import ProfilesPage, load_profiles
from rlm_desktop.ui.settings.providers import ProvidersPage
from rlm_desktop.ui.settings.sandbox import SandboxPage
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.shared.widgets import note_label, plain_label, resize_within_screen

if TYPE_CHECKING:
    from rlm_desktop.ui.run.sandbox_preparation import WasmPreparation

THEMES = (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark"))
LARGEST_FONT_SIZE = 32


def _error_line() -> QLabel:
    """Where a field's value that was not saved says why (the reason may quote the value)."""
    label = plain_label()
    label.setObjectName("error")
    return label


def _font_size(name: str) -> QSpinBox:
    """A font size in points; 0 shows as "default", the size the font has without a choice."""
    spin = QSpinBox()
    spin.setRange(0, LARGEST_FONT_SIZE)
    spin.setSpecialValueText("default")
    spin.setAccessibleName(name)
    return spin


class DefaultsPage(QWidget):
    """The models, mode, depth, profile and budget a new run starts with."""

    def __init__(
        self, prefs: Preferences, models: list[str] | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.prefs = prefs
        self.fields = RunControls(as_form=True)
        self.fields.set_model_names(models or litellm_model_names(DEFAULT_MODEL))
        profiles, _problem = load_profiles()
        defaults = prefs.run_defaults()
        self.fields.set_profiles([p.name for p in profiles], defaults.profile)
        self.fields.endpoint.set_endpoints(prefs.endpoints(), defaults.endpoint)
        self.fields.apply_defaults(defaults)
        self.loaded = defaults
        """The defaults as last read; only what the user changed since is saved."""
        note = note_label(
            "New runs start from these settings. A cost, token, sub-call or time "
            "limit of 0 means no limit."
        )
        self.prices = QPlainTextEdit(prefs.prices_text())
        self.prices.setAccessibleName("Your model prices")
        self.prices.setPlaceholderText(
            "openai/my-finetune = 0.30, 1.20\nollama_chat/llama3.1 = 0, 0"
        )
        self.prices.setMaximumHeight(90)
        prices_note = note_label(
            "Your prices, for models litellm's price map does not know (or to override it): one "
            "<code>model = input, output</code> line each, in US dollars per million tokens."
        )
        self.prices_error = _error_line()
        self.otlp = QLineEdit(prefs.otlp_endpoint)
        self.otlp.setAccessibleName("OTLP collector")
        self.otlp.setPlaceholderText("http://localhost:4318  (empty: traces stay on this computer)")
        otlp_note = note_label(
            "Send each finished run's trace (OpenTelemetry, protobuf over HTTP) to this collector: "
            "Phoenix, Langfuse, Jaeger or an OpenTelemetry collector."
        )
        self.otlp_error = _error_line()
        self.ocr = QCheckBox("Read the text in images and scanned PDF pages (OCR)")
        self.ocr.setChecked(prefs.ocr)
        self.ocr.setToolTip(
            "Recognised on this computer's CPU (a few seconds a page), nothing sent anywhere; "
            "the model is told which text was recognised, and how sure the recognition was."
        )
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addWidget(self.fields)
        layout.addWidget(self.ocr)
        layout.addWidget(prices_note)
        layout.addWidget(self.prices)
        layout.addWidget(self.prices_error)
        layout.addWidget(otlp_note)
        layout.addWidget(self.otlp)
        layout.addWidget(self.otlp_error)
        layout.addStretch(1)

    def showEvent(self, event: QShowEvent) -> None:
        """Show defaults saved meanwhile (a local server chosen from the Providers page)."""
        super().showEvent(event)
        self.sync()

    def sync(self) -> None:
        """Take the saved defaults that changed since they were read, unless edited here."""
        touched = self.fields.defaults().changed_since(self.loaded)
        saved = self.prefs.run_defaults()
        news = [name for name in saved.changed_since(self.loaded) if name not in touched]
        self.fields.apply_defaults(saved, news)
        self.loaded = replace(self.loaded, **{name: getattr(saved, name) for name in news})

    def refresh_servers(self) -> None:
        """List the local servers as Settings → Providers has them now."""
        self.fields.endpoint.set_endpoints(self.prefs.endpoints())

    def add_models(self, _server: str, names: list[str]) -> None:
        """Offer the models a local server listed just now, first."""
        known = self.fields.model_names.stringList()
        self.fields.set_model_names(list(dict.fromkeys([*names, *known])))

    def save(self) -> None:
        """Save the fields as the defaults for new runs (prices are checked, and kept either way)."""
        from rlm_desktop.engine.config import ConfigError
        from rlm_desktop.engine.pricing import parse_prices

        text = self.prices.toPlainText()
        try:
            parse_prices(text)
            self.prices_error.setText("")
        except ConfigError as error:
            self.prices_error.setText(error.problem[:1].upper() + error.problem[1:])
        self.prefs.set_prices_text(text)
        self.prefs.set_ocr(self.ocr.isChecked())
        self.save_otlp_endpoint()
        defaults = self.fields.defaults()
        self.prefs.set_run_defaults(defaults, defaults.changed_since(self.loaded))

    def save_otlp_endpoint(self) -> None:
        """Save the collector's URL, unless it is not one (then say why, and keep the old)."""
        from rlm_desktop.exports.otlp_proto import endpoint_problem

        url = self.otlp.text().strip()
        problem = endpoint_problem(url) if url else None
        self.otlp_error.setText(f"Not saved: {problem}." if problem else "")
        if problem is None:
            self.prefs.set_otlp_endpoint(url)


class AppearancePage(QWidget):
    """Theme and fonts, applied at once; `theme_changed` tells the window to repaint code."""

    theme_changed = Signal()

    def __init__(self, prefs: Preferences, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prefs = prefs
        self.theme = QComboBox()
        self.theme.setAccessibleName("Theme")
        for value, label in THEMES:
            self.theme.addItem(label, value)
        self.theme.setCurrentIndex(max(0, self.theme.findData(prefs.theme)))
        self.ui_font = QFontComboBox()
        self.ui_font.setAccessibleName("Interface font")
        self.ui_size = _font_size("Interface font size")
        self.code_font = QFontComboBox()
        self.code_font.setFontFilters(QFontComboBox.FontFilter.MonospacedFonts)
        self.code_font.setAccessibleName("Code font")
        self.code_size = _font_size("Code font size")
        ui_family = prefs.get_str("appearance/ui_font")
        code_family = prefs.get_str("appearance/code_font")
        if ui_family:
            self.ui_font.setCurrentText(ui_family)
        if code_family:
            self.code_font.setCurrentText(code_family)
        self.ui_size.setValue(prefs.get_int("appearance/ui_font_size"))
        self.code_size.setValue(prefs.get_int("appearance/code_font_size"))
        form = QFormLayout(self)
        form.addRow("Theme", self.theme)
        form.addRow("Interface font", self.ui_font)
        form.addRow("Interface size", self.ui_size)
        form.addRow("Code font", self.code_font)
        form.addRow("Code size", self.code_size)
        self.theme.currentIndexChanged.connect(self.apply_theme)
        self.touched = {"ui": bool(ui_family), "code": bool(code_family)}
        self.ui_font.currentFontChanged.connect(lambda _f: self.touched.update(ui=True))
        self.code_font.currentFontChanged.connect(lambda _f: self.touched.update(code=True))

    def apply_theme(self) -> None:
        """Save and apply the chosen theme now."""
        self.prefs.set("appearance/theme", self.theme.currentData())
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, self.prefs.theme)
            self.theme_changed.emit()

    def save(self) -> None:
        """Save and apply the fonts (the code font applies to new console cells)."""
        ui_family = self.ui_font.currentText() if self.touched["ui"] else ""
        code_family = self.code_font.currentText() if self.touched["code"] else ""
        self.prefs.set("appearance/ui_font", ui_family)
        self.prefs.set("appearance/ui_font_size", self.ui_size.value())
        self.prefs.set("appearance/code_font", code_family)
        self.prefs.set("appearance/code_font_size", self.code_size.value())
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_fonts(app, ui_family, self.ui_size.value(), code_family, self.code_size.value())


class SettingsDialog(QDialog):
    """Five pages; changes to keys and the sandbox apply at once, the rest when the dialog closes.

    `models` are the names the window's model pickers offer (litellm's by default);
    `preparation` is the window's getting the WebAssembly sandbox ready (see `SandboxPage`).
    """

    PAGES = ("providers", "defaults", "sandbox", "profiles", "appearance")

    def __init__(
        self,
        prefs: Preferences,
        parent: QWidget | None = None,
        page: str = "",
        models: list[str] | None = None,
        preparation: WasmPreparation | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setAccessibleName("Settings")
        self.prefs = prefs
        self.providers = ProvidersPage(prefs)
        self.defaults = DefaultsPage(prefs, models)
        self.providers.servers_changed.connect(self.defaults.refresh_servers)
        self.providers.models_found.connect(self.defaults.add_models)
        self.sandbox = SandboxPage(prefs, preparation=preparation)
        self.profiles = ProfilesPage()
        self.appearance = AppearancePage(prefs)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.providers, "Providers")
        # The one page taller than a 1024×640 screen leaves room for (with wider type).
        self.tabs.addTab(_scrolled(self.defaults), "Run defaults")
        self.tabs.addTab(self.sandbox, "Sandbox")
        self.tabs.addTab(self.profiles, "Prompt profiles")
        self.tabs.addTab(self.appearance, "Appearance")
        if page in self.PAGES:
            self.tabs.setCurrentIndex(self.PAGES.index(page))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(buttons)
        resize_within_screen(self, 900, 620)

    def done(self, result: int) -> None:
        """Save the defaults and fonts, then close (a sandbox probe still running is stopped)."""
        self.sandbox.stop_probe()
        self.defaults.save()
        self.appearance.save()
        super().done(result)


class _Scrolled(QScrollArea):
    """A page that asks for its whole height, and scrolls when the dialog cannot give it."""

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """The page's own size."""
        page = self.widget()
        return page.sizeHint() if page is not None else super().sizeHint()


def _scrolled(page: QWidget) -> QScrollArea:
    """`page` in a frameless area that scrolls vertically when the dialog is shorter than it."""
    area = _Scrolled()
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area
