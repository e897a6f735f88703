"""The welcome page works from the keyboard and says whether a provider is set up; a sample opens
even while a saved session is reviewed; the file dialogs open where the last pick was."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.shared.file_dialogs import home_of_documents
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.main_window import MainWindow
from rlm_desktop.ui.window.welcome import HAS_PROVIDER, NEEDS_PROVIDER
from tests.qt_fixtures import qloop as qloop
from tests.qt_fixtures import window as window
from tests.review.recorded_runs import FANOUT
from tests.ui.test_replay import recorded


def test_enter_presses_the_welcome_button_that_has_the_focus(
    window: MainWindow, qtbot: QtBot
) -> None:
    window.show_welcome()
    assert window.welcome.note.text() == NEEDS_PROVIDER
    window.welcome.skip_button.setFocus()
    qtbot.keyClick(window.welcome, Qt.Key.Key_Return)
    assert window.pages.currentWidget() is window.workspace


def test_the_welcome_page_says_a_provider_is_set_up_once_one_is(
    window: MainWindow, qtbot: QtBot
) -> None:
    Preferences().set_base_url("local", "http://127.0.0.1:9/v1")
    window.show_welcome()
    assert window.welcome.note.text() == HAS_PROVIDER
    assert window.welcome.settings_button.text() == "Providers…"


def test_a_sample_opens_while_a_saved_session_is_reviewed(
    window: MainWindow, qtbot: QtBot
) -> None:
    done = recorded(qtbot, FANOUT)
    assert window.open_session(done.session_id)
    assert window.workspace.reviewing
    path, question = window.welcome.samples[0]
    window.open_sample(path, question)
    assert not window.workspace.reviewing
    qtbot.waitUntil(lambda: any(d.path == path for d in window.workspace.documents.documents()))
    assert window.workspace.controls.question.toPlainText() == question


def test_the_file_dialogs_open_where_the_last_pick_was(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qt's own dialog is stood in for (it would wait for a person); the app's code is not."""
    asked: list[str] = []
    picked = tmp_path / "reports" / "q3.txt"
    picked.parent.mkdir()
    picked.write_text("numbers\n", encoding="utf-8")

    def get_open_file_names(
        _parent: object, _caption: str, folder: str, _filters: str, _selected: str = ""
    ) -> tuple[list[str], str]:
        asked.append(folder)
        return [str(picked)], ""

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(get_open_file_names))
    window.workspace.documents.choose_files()
    window.close()
    again = MainWindow(warm_up=False)
    qtbot.addWidget(again)
    again.workspace.documents.choose_files()
    # first in the user's Documents (or home), then, after a restart, where the last pick was
    assert asked == [home_of_documents(), str(picked.parent)]
    again.shutdown()
