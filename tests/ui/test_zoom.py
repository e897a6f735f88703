"""Live zoom: Ctrl+= / Ctrl+− / Ctrl+0 change the interface's text at once, the question box
follows, the choice is saved, and a step the screen has no room for is refused with a note."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.layout_memory import room_on_screen
from rlm_desktop.ui.window.main_window import MainWindow
from rlm_desktop.ui.window.zoom import LARGEST_POINTS, TOO_LARGE
from tests.cli import run_python
from tests.qt_fixtures import qloop as qloop
from tests.qt_fixtures import window as window


@pytest.fixture
def app() -> Iterator[QApplication]:
    """The application, its interface font put back as it was after the test."""
    instance = QApplication.instance()
    assert isinstance(instance, QApplication)
    font = instance.font()
    yield instance
    instance.setFont(font)


def test_ctrl_plus_and_minus_resize_the_text_at_once_and_ctrl_0_resets_it(
    window: MainWindow, qtbot: QtBot, app: QApplication
) -> None:
    start = app.font().pointSize()
    question = window.workspace.controls.question
    height = question.maximumHeight()
    qtbot.keyClick(window, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert app.font().pointSize() == start + 2
    assert question.maximumHeight() > height  # three lines of the larger text
    assert Preferences().get_int("appearance/ui_font_size") == start + 2
    qtbot.keyClick(window, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert app.font().pointSize() == start + 1
    qtbot.keyClick(window, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    general = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont)
    assert app.font().pointSize() == general.pointSize()
    assert Preferences().get_int("appearance/ui_font_size") == 0  # "default" again


def test_a_step_past_what_the_screen_holds_is_refused_and_said(
    window: MainWindow, app: QApplication
) -> None:
    while window.zoom.zoom_in():
        assert window.zoom.points <= LARGEST_POINTS
    largest = window.zoom.points
    assert largest < LARGEST_POINTS, "the offscreen screen cannot hold 32-point text"
    assert window.statusBar().currentMessage() == TOO_LARGE
    assert app.font().pointSize() == largest  # the refused step was taken back
    least = window.minimumSizeHint()
    room = window.screen().availableGeometry().size()
    assert least.width() <= room.width()
    assert least.height() <= room.height()


def test_a_damaged_interface_size_is_not_taken(isolated_home: Path) -> None:
    """A settings file saying 999 points (by hand, or damaged) starts at the platform's size:
    the window had asked X for a 5 GB buffer and shown black."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "settings.ini").write_text(
        "[appearance]\nui_font_size=999\ncode_font_size=-4\n", encoding="utf-8"
    )
    probe = (
        "from rlm_desktop.ui.app import create_application\n"
        "from rlm_desktop.ui.appearance.theme import monospace_font\n"
        "from PySide6.QtGui import QFontDatabase\n"
        "app = create_application([])\n"
        "general = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont).pointSize()\n"
        "print(app.font().pointSize() == general, monospace_font().pointSize() > 0)\n"
    )
    done = run_python("-c", probe, home=isolated_home, env={"QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


def test_enlarging_reaches_the_largest_size_that_fits_whether_or_not_the_largest_asked_does(
    window: MainWindow, qtbot: QtBot, app: QApplication
) -> None:
    """Presenting asks for a size and takes the largest that fits and leaves room: tried first
    (one restyling where it fits), else searched for. Either way, it is what trying every size
    in turn finds."""
    zoom = window.zoom
    zoom.persist = False
    start = zoom.points

    def fits_with_room(points: int) -> bool:
        zoom.restore(points)
        least, room = window.least_size(), room_on_screen(window)
        return least.width() <= room.width() and least.height() <= room.height()

    every_size = [p for p in range(start, LARGEST_POINTS + 1) if fits_with_room(p)]
    largest = max(every_size)
    assert largest < LARGEST_POINTS, "the screen should be too small for the largest size"
    zoom.restore(start)
    assert zoom.enlarge_to(LARGEST_POINTS) == largest
    zoom.restore(start)
    assert zoom.enlarge_to(largest) == largest  # the asked size fits: taken at once
    zoom.restore(start)
    zoom.persist = True
