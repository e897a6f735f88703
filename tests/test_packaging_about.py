"""Help → About names the version a user installed, the Python and Qt it runs on, and its data."""

from __future__ import annotations

from pathlib import Path

import PySide6
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from rlm_desktop import __version__
from rlm_desktop.ui.window.main_window import MainWindow
from tests.qt_fixtures import qloop as qloop
from tests.qt_fixtures import window as window


def test_the_about_box_shows_the_version_and_the_data_folder(
    window: MainWindow, qtbot: QtBot, isolated_home: Path
) -> None:
    seen: list[str] = []

    def read_and_close() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen.append(box.text())
        box.accept()

    QTimer.singleShot(0, read_and_close)
    window.about_action.trigger()
    assert len(seen) == 1
    assert f"<b>RLM Desktop {__version__}</b>" in seen[0]
    assert str(isolated_home) in seen[0]
    assert f"PySide6 {PySide6.__version__}" in seen[0]
