"""Light and dark looks: palettes, the style sheet, the colours views paint with, and icons."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QIcon,
    QPainter,
    QPalette,
)
from PySide6.QtWidgets import QApplication, QWidget

from rlm_desktop.formatting import status_tone
from rlm_desktop.paths import resource


@dataclass(frozen=True)
class Colors:
    """The colours our own widgets use beyond the palette."""

    error: str
    warning: str
    ok: str
    muted: str
    accent: str
    card: str
    card_border: str
    code_bg: str
    answer_bg: str
    passage: str
    """The background of a source's passage in the documents preview (not coverage's shade)."""
    pygments_style: str


LIGHT = Colors(
    error="#c0362c",
    warning="#a86400",
    ok="#2e8a50",
    muted="#6b7280",
    accent="#2f5fc4",
    card="#ffffff",
    card_border="#d8dce3",
    code_bg="#f6f8fa",
    answer_bg="#eaf3ea",
    passage="#ffe38a",
    pygments_style="default",
)
DARK = Colors(
    error="#ff7b72",
    warning="#e3b341",
    ok="#56d364",
    muted="#8b949e",
    accent="#79a6ff",
    card="#1c2128",
    card_border="#373e47",
    code_bg="#161b22",
    answer_bg="#1b3024",
    passage="#6e5512",
    pygments_style="github-dark",
)

_current = LIGHT
_code_font: tuple[str, int] = ("", 0)


def colors() -> Colors:
    """The colours of the theme in force."""
    return _current


def _dark_palette() -> QPalette:
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#22272e",
        QPalette.ColorRole.WindowText: "#cdd9e5",
        QPalette.ColorRole.Base: "#1c2128",
        QPalette.ColorRole.AlternateBase: "#262c36",
        QPalette.ColorRole.ToolTipBase: "#2d333b",
        QPalette.ColorRole.ToolTipText: "#cdd9e5",
        QPalette.ColorRole.PlaceholderText: "#768390",
        QPalette.ColorRole.Text: "#cdd9e5",
        QPalette.ColorRole.Button: "#2d333b",
        QPalette.ColorRole.ButtonText: "#cdd9e5",
        QPalette.ColorRole.BrightText: "#ff7b72",
        QPalette.ColorRole.Link: "#79a6ff",
        QPalette.ColorRole.Highlight: "#2f5fc4",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Mid: "#444c56",
        QPalette.ColorRole.Dark: "#1c2128",
        QPalette.ColorRole.Light: "#444c56",
    }
    for role, value in roles.items():
        palette.setColor(role, QColor(value))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#636e7b"))
    return palette


def system_prefers_dark() -> bool:
    """True when the platform reports a dark colour scheme."""
    hints = QGuiApplication.styleHints()
    return bool(hints.colorScheme() == Qt.ColorScheme.Dark)


def apply_theme(app: QApplication, theme: str) -> Colors:
    """Apply "light", "dark" or "system" to the whole application; returns the colours."""
    global _current
    dark = theme == "dark" or (theme == "system" and system_prefers_dark())
    _current = DARK if dark else LIGHT
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    app.setPalette(_dark_palette() if dark else app.style().standardPalette())
    app.setStyleSheet(style_sheet(_current))
    return _current


def style_sheet(c: Colors) -> str:
    """The application style sheet with the theme's colours filled in."""
    text = resource("style", "app.qss").read_text(encoding="utf-8")
    for name in (
        "card_border",
        "answer_bg",
        "code_bg",
        "error",
        "warning",
        "ok",
        "muted",
        "accent",
        "card",
    ):
        text = text.replace(f"@{name}", getattr(c, name))
    return text


def set_code_font(family: str, size: int) -> None:
    """Choose the font for code and output ("" and 0 keep the system's fixed font)."""
    global _code_font
    _code_font = (family, size)


SMALLEST_POINTS = 6
LARGEST_POINTS = 32
"""The type sizes the app takes; a saved size outside them (a damaged settings file) is not a
choice, and the platform's size is used instead (999 points had asked X for a 5 GB window)."""


def sane_points(points: int) -> int:
    """`points` if it is a size the app takes, else 0 (the platform's)."""
    return points if SMALLEST_POINTS <= points <= LARGEST_POINTS else 0


def apply_fonts(
    app: QApplication, ui_family: str, ui_size: int, code_family: str, code_size: int
) -> None:
    """Apply the user's interface font, to the widgets already made too, and remember the code
    font (a size outside `SMALLEST_POINTS`..`LARGEST_POINTS` leaves the platform's)."""
    ui_size, code_size = sane_points(ui_size), sane_points(code_size)
    if ui_family or ui_size > 0:
        font = app.font()
        if ui_family:
            font.setFamily(ui_family)
        if ui_size > 0:
            font.setPointSize(ui_size)
        app.setFont(font)
        if app.topLevelWidgets():
            # The style sheet holds polished widgets' fonts; set again, it lets them go.
            app.setStyleSheet(app.styleSheet())
    set_code_font(code_family, code_size)


def monospace_font(family: str = "", size: int = 0) -> QFont:
    """The font for code and output: the chosen family, else the system's fixed font."""
    family = family or _code_font[0]
    size = size or _code_font[1]
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if family:
        font.setFamily(family)
    font.setStyleHint(QFont.StyleHint.Monospace)
    if size > 0:
        font.setPointSize(size)
    return font


def repolish(widget: QWidget) -> None:
    """Apply the style sheet again after a change of object name (error/normal looks)."""
    style = widget.style()
    style.unpolish(widget)
    style.polish(widget)
    widget.update()


@cache
def icon(name: str) -> QIcon:
    """An icon from `resources/icons/NAME.svg`."""
    return QIcon(str(resource("icons", f"{name}.svg")))


INKED_SIZES = (16, 24, 32, 48)
"""The pixel sizes an inked icon is drawn at (2x screens pick the larger)."""


def inked(source: QIcon, color: QColor) -> QIcon:
    """`source`'s shape in `color`: the style's own media glyphs are dark, and would be dark on
    dark in the dark theme."""
    result = QIcon()
    for size in INKED_SIZES:
        for mode in (QIcon.Mode.Normal, QIcon.Mode.Disabled):
            pixmap = source.pixmap(size, size)
            if pixmap.isNull():
                continue
            painter = QPainter(pixmap)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
            ink = QColor(color)
            if mode == QIcon.Mode.Disabled:
                ink.setAlphaF(0.35)
            painter.fillRect(pixmap.rect(), ink)
            painter.end()
            result.addPixmap(pixmap, mode)
    return result


def status_icon(status: str) -> QIcon:
    """The icon for a call's or a run's status (`formatting.status_tone` groups them)."""
    return icon(f"status-{status_tone(status)}")


def warning_icon() -> QIcon:
    """A warning mark: something went wrong that did not end the call."""
    return icon("status-limit")


def tone_color(status: str) -> str:
    """The colour for text about a status: error, warning (limits), muted (stopped), or ok."""
    c = _current
    return {"ok": c.ok, "stopped": c.muted, "limit": c.warning, "running": c.muted}.get(
        status_tone(status), c.error
    )
