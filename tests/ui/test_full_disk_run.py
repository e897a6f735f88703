"""A run started from the window on a disk without room to record it is one line under the run's
fields, before any request: the data folder is a real small disk (a tmpfs), filled after a first
run was saved, which stays saved."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from rlm_desktop.store.room import FIX
from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.small_disk import fill, small_disk
from tests.ui.test_end_to_end import memos, prepare


@pytest.fixture
def small_home(isolated_home: Path) -> Iterator[Path]:
    """The data folder on a 16 MiB disk of its own (set up before the window, which writes its
    settings there, and taken down after it)."""
    with small_disk(isolated_home, 16 * 1024 * 1024):
        yield isolated_home


def test_a_run_on_a_full_disk_is_one_line_and_sends_nothing(
    small_home: Path, window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(scripted(root=[repl("FINAL('7 zebrafish')")]))
    window.prefs.set_prices_text("openai/test-model = 0, 0")  # a free local model
    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
    ws = window.workspace
    assert window.start_run()
    qtbot.waitUntil(lambda: ws.answer.isVisible(), timeout=60_000)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=10_000)
    finished = ws.model.tree.run.finished
    assert finished is not None
    assert finished.status == "completed"
    sent = len(scripted_server.chat_requests())
    filler = fill(small_home)

    assert window.start_run()
    error = ws.controls.error
    qtbot.waitUntil(lambda: "the disk is full" in error.text(), timeout=20_000)
    assert error.text().startswith(f"Not started: the disk is full: {small_home} has 0 MB free")
    assert error.text().endswith(f"; {FIX}")
    assert "\n" not in error.text()
    assert error.objectName() == "errorLabel"
    assert not window.starter.running
    assert ws.controls.run_button.isEnabled()
    assert not ws.controls.stop_button.isEnabled()
    assert len(scripted_server.chat_requests()) == sent

    filler.unlink()
    sessions = window.starter.store().list_sessions()
    assert [(s["id"], s["status"]) for s in sessions] == [(finished.run_id, "completed")]
