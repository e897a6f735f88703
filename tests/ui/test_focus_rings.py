"""The Settings and Budget lines fold with a button that is in the Tab order; a person moving by
keyboard sees which one has the focus, in either theme (Fusion draws no frame round an
auto-raised tool button, focused or not)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QLineEdit, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.appearance.theme import apply_theme, colors
from rlm_desktop.ui.shared.fold_line import FoldLine


@pytest.fixture
def themed_app(qapp: QApplication) -> Iterator[QApplication]:
    yield qapp
    apply_theme(qapp, "light")


def accent_pixels(image: QImage) -> int:
    accent = QColor(colors().accent)
    return sum(
        1
        for x in range(image.width())
        for y in range(image.height())
        if image.pixelColor(x, y) == accent
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_focused_fold_line_shows_a_ring_in_the_accent_colour(
    themed_app: QApplication, qtbot: QtBot, theme: str
) -> None:
    apply_theme(themed_app, theme)
    holder = QWidget()
    qtbot.addWidget(holder)
    before = QLineEdit()
    line = FoldLine("&Settings", "Show or hide the run's settings")
    line.summarise("openai/gpt-5-mini · RLM · depth 2")
    layout = QVBoxLayout(holder)
    layout.addWidget(before)
    layout.addWidget(line)
    holder.show()
    qtbot.waitExposed(holder)
    before.setFocus()
    qtbot.waitUntil(before.hasFocus)
    unfocused = line.toggle.grab().toImage()
    qtbot.keyClick(before, "\t")  # Tab, as a person moves
    qtbot.waitUntil(line.toggle.hasFocus)
    focused = line.toggle.grab().toImage()
    assert accent_pixels(unfocused) == 0
    ring = 2 * (focused.width() + focused.height()) - 8  # the border, less its rounded corners
    assert accent_pixels(focused) >= ring * 0.8, "no visible focus ring"
