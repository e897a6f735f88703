"""The replay bar's transport buttons are legible in both themes: their glyphs take the text
colour, so they are light on the dark theme's dark buttons (the style's own are dark on dark)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QToolButton
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.appearance.theme import apply_theme
from rlm_desktop.ui.replay.bar import ReplayBar


def glyph_lightness(button: QToolButton) -> int:
    """The lightness of the glyph's most opaque pixels."""
    image = button.icon().pixmap(24, 24).toImage()
    inked = [
        QColor(image.pixel(x, y))
        for x in range(image.width())
        for y in range(image.height())
        if image.pixelColor(x, y).alpha() > 200
    ]
    assert inked, "the glyph has no opaque pixels"
    return sorted(c.lightness() for c in inked)[len(inked) // 2]


@pytest.fixture
def themed_app(qapp: QApplication) -> Iterator[QApplication]:
    yield qapp
    apply_theme(qapp, "light")


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_transport_glyphs_stand_out_from_their_buttons(
    themed_app: QApplication, qtbot: QtBot, theme: str
) -> None:
    bar = ReplayBar()
    qtbot.addWidget(bar)
    bar.show()
    apply_theme(themed_app, theme)  # a theme changed while the bar is shown
    themed_app.processEvents()
    background = themed_app.palette().color(QPalette.ColorRole.Button).lightness()
    for button in (bar.play_button, bar.next_button, bar.previous_turn_button):
        assert abs(glyph_lightness(button) - background) > 100, (theme, button.text())
