"""The question box, model pickers, mode, depth, profile and budget fields, Run and Stop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop.ui.preferences import RunDefaults

if TYPE_CHECKING:
    from rlm_desktop.engine.config import Budget, ConfigError, Mode

MODES = (("auto", "Auto"), ("rlm", "RLM (REPL)"), ("direct", "Direct call"))
SETTING_LABELS = {
    "query": "The question",
    "model": "The root model",
    "sub_model": "The sub-model",
    "mode": "The mode",
    "profile": "The prompt profile",
    "max_depth": "The depth",
    "max_cost_usd": "The cost limit",
    "max_tokens": "The token limit",
    "max_sub_calls": "The sub-call limit",
    "max_turns": "Turns per call",
    "timeout_s": "The time limit",
    "prices": "Prices (Settings → Run defaults):",
}
"""How the engine's settings are called in the window, for its `ConfigError` messages."""


def describe_config_error(error: ConfigError) -> str:
    """An engine `ConfigError` as a sentence that names the field to change."""
    text = error.worded(SETTING_LABELS)
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


@dataclass(frozen=True)
class RunRequest:
    """What the run controls ask for: the question, where it goes, and the limits.

    Empty choices are None ("same as root", "the provider's API", "by model name"), and so are
    the budget's caps set to "no limit".
    """

    query: str
    model: str
    sub_model: str | None
    api_base: str | None
    mode: Mode
    profile: str | None
    budget: Budget


def model_picker(name: str, placeholder: str, names: QStringListModel) -> QComboBox:
    """An editable combo box of litellm model names that completes on any part of the name."""
    combo = QComboBox()
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    combo.setAccessibleName(name)
    combo.setMinimumContentsLength(14)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    line = combo.lineEdit()
    assert line is not None
    line.setPlaceholderText(placeholder)
    completer = QCompleter(names, combo)
    completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    completer.setFilterMode(Qt.MatchFlag.MatchContains)
    completer.setMaxVisibleItems(14)
    combo.setCompleter(completer)
    return combo


def _spin(name: str, maximum: int, suffix: str = "", step: int = 1) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(0, maximum)
    spin.setSingleStep(step)
    spin.setSpecialValueText("no limit")
    spin.setSuffix(suffix)
    spin.setGroupSeparatorShown(True)
    spin.setAccessibleName(name)
    return spin


class RunControls(QWidget):
    """Everything that defines the next run. `run_requested` and `stop_requested` fire on the
    buttons (the window binds Ctrl+Enter and Esc to the same)."""

    run_requested = Signal()
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None, *, as_form: bool = False) -> None:
        """`as_form` lays the run settings out one per line, without question or buttons
        (the settings dialog's run defaults)."""
        super().__init__(parent)
        self.model_names = QStringListModel(self)
        self.question = QPlainTextEdit()
        self.question.setPlaceholderText(
            "Ask a question about the documents… (Ctrl+Enter to run, Esc to stop)"
        )
        self.question.setAccessibleName("Question")
        self.question.setTabChangesFocus(True)
        self.question.setFixedHeight(self.question.fontMetrics().lineSpacing() * 3 + 16)
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("primary")
        self.run_button.setToolTip("Start the run (Ctrl+Enter)")
        self.run_button.setAccessibleName("Run")
        self.run_button.clicked.connect(self.run_requested)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop the whole run (Esc)")
        self.stop_button.setAccessibleName("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop_requested)

        self.model = model_picker("Root model", "provider/model", self.model_names)
        self.sub_model = model_picker("Sub-model", "same as root", self.model_names)
        self.endpoint = QComboBox()
        self.endpoint.setAccessibleName("Endpoint")
        self.endpoint.setToolTip("Where requests go: the provider's own API or a local server")
        self.mode = QComboBox()
        self.mode.setAccessibleName("Mode")
        for value, mode_name in MODES:
            self.mode.addItem(mode_name, value)
        self.mode.setToolTip("Auto answers short inputs with one direct call")
        self.max_depth = QSpinBox()
        self.max_depth.setRange(1, 6)
        self.max_depth.setAccessibleName("Maximum depth")
        self.max_depth.setToolTip("REPL levels: 1 means only the root has a REPL")
        self.profile = QComboBox()
        self.profile.setAccessibleName("Prompt profile")
        self.profile.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.profile.setMinimumContentsLength(13)
        self.endpoint.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)

        self.max_cost = QDoubleSpinBox()
        self.max_cost.setRange(0, 10_000)
        self.max_cost.setDecimals(2)
        self.max_cost.setSingleStep(0.25)
        self.max_cost.setPrefix("$")
        self.max_cost.setSpecialValueText("no limit")
        self.max_cost.setAccessibleName("Maximum cost in dollars")
        self.max_tokens = _spin("Maximum tokens", 1_000_000_000, step=100_000)
        self.max_sub_calls = _spin("Maximum sub-calls", 1_000_000, step=10)
        self.max_turns = QSpinBox()
        self.max_turns.setRange(1, 500)
        self.max_turns.setAccessibleName("Maximum turns per call")
        self.timeout = _spin("Time limit in seconds", 86_400, " s", step=60)

        top = QHBoxLayout()
        top.addWidget(self.question, 1)
        buttons = QVBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        top.addLayout(buttons)

        self.error = QLabel()
        self.error.setObjectName("errorLabel")
        self.error.setWordWrap(True)
        self.error.setAccessibleName("Run error")
        self.error.hide()
        if as_form:
            self._form_layout()
            return
        settings_row = self._row(
            [
                ("&Model", self.model, 3),
                ("S&ub-model", self.sub_model, 3),
                ("&Endpoint", self.endpoint, 2),
                ("M&ode", self.mode, 1),
                ("&Depth", self.max_depth, 0),
                ("&Profile", self.profile, 1),
            ]
        )
        limits_row = self._row(
            [
                ("Budget:  cost", self.max_cost, 1),
                ("tokens", self.max_tokens, 1),
                ("sub-calls", self.max_sub_calls, 1),
                ("turns per call", self.max_turns, 0),
                ("time", self.timeout, 1),
            ]
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addLayout(settings_row)
        layout.addLayout(limits_row)
        layout.addWidget(self.error)

    def _form_layout(self) -> None:
        hidden: list[QWidget] = [self.question, self.run_button, self.stop_button, self.endpoint]
        for widget in hidden:
            widget.hide()
        form = QFormLayout(self)
        rows: list[tuple[str, QWidget]] = [
            ("Root &model", self.model),
            ("S&ub-model", self.sub_model),
            ("M&ode", self.mode),
            ("&Depth", self.max_depth),
            ("&Profile", self.profile),
            ("Maximum &cost", self.max_cost),
            ("Maximum &tokens", self.max_tokens),
            ("Maximum &sub-calls", self.max_sub_calls),
            ("Turns per call", self.max_turns),
            ("Time &limit", self.timeout),
        ]
        for caption, field in rows:
            form.addRow(caption, field)

    @staticmethod
    def _row(fields: list[tuple[str, QWidget, int]]) -> QHBoxLayout:
        """Label-field pairs in one line; `stretch` shares out the spare width."""
        row = QHBoxLayout()
        row.setSpacing(6)
        for index, (caption, widget, stretch) in enumerate(fields):
            label = QLabel(caption)
            label.setBuddy(widget)
            if index:
                row.addSpacing(8)
            row.addWidget(label)
            row.addWidget(widget, stretch)
        return row

    def show_error(self, message: str) -> None:
        """Show a one-line problem under the fields ("" hides it)."""
        self.error.setText(message)
        self.error.setVisible(bool(message))

    def set_running(self, running: bool) -> None:
        """Enable Stop and lock the inputs while a run is in progress."""
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running)

    def set_model_names(self, names: list[str]) -> None:
        """The names the model pickers complete and list."""
        self.model_names.setStringList(names)
        for combo in (self.model, self.sub_model):
            text = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(names[:40])
            combo.setEditText(text)
            combo.blockSignals(False)

    def set_profiles(self, names: list[str], current: str = "") -> None:
        """The prompt profiles to choose from ("" picks one by model name)."""
        self.profile.clear()
        self.profile.addItem("by model name", "")
        for name in names:
            self.profile.addItem(name, name)
        self.profile.setCurrentIndex(max(0, self.profile.findData(current)))

    def set_endpoints(self, endpoints: list[tuple[str, str]], current: str = "") -> None:
        """Endpoint choices as (label, base URL); the provider's own API is always first."""
        self.endpoint.clear()
        self.endpoint.addItem("provider's API", "")
        for label, url in endpoints:
            if url:
                self.endpoint.addItem(label, url)
                self.endpoint.setItemData(
                    self.endpoint.count() - 1, url, Qt.ItemDataRole.ToolTipRole
                )
        self.endpoint.setCurrentIndex(max(0, self.endpoint.findData(current)))

    def apply_defaults(self, d: RunDefaults) -> None:
        """Fill the fields from saved defaults."""
        self.model.setEditText(d.model)
        self.sub_model.setEditText(d.sub_model)
        self.mode.setCurrentIndex(max(0, self.mode.findData(d.mode)))
        self.max_depth.setValue(d.max_depth)
        self.profile.setCurrentIndex(max(0, self.profile.findData(d.profile)))
        self.max_cost.setValue(d.max_cost_usd)
        self.max_tokens.setValue(d.max_tokens)
        self.max_sub_calls.setValue(d.max_sub_calls)
        self.max_turns.setValue(d.max_turns)
        self.timeout.setValue(d.timeout_s)

    def defaults(self) -> RunDefaults:
        """The fields as defaults for new runs (0 is "no limit"; no model means the default)."""
        return RunDefaults(
            model=self.model.currentText().strip() or RunDefaults.model,
            sub_model=self.sub_model.currentText().strip(),
            mode=self.mode.currentData(),
            max_depth=self.max_depth.value(),
            profile=self.profile.currentData() or "",
            max_cost_usd=self.max_cost.value(),
            max_tokens=self.max_tokens.value(),
            max_sub_calls=self.max_sub_calls.value(),
            max_turns=self.max_turns.value(),
            timeout_s=self.timeout.value(),
        )

    def request(self) -> RunRequest:
        """The run the fields ask for now."""
        fields = self.defaults()
        return RunRequest(
            query=self.question.toPlainText().strip(),
            model=self.model.currentText().strip(),
            sub_model=fields.sub_model or None,
            api_base=self.endpoint.currentData() or None,
            mode=self.mode.currentData(),
            profile=fields.profile or None,
            budget=fields.budget(),
        )
