"""The window tells when the session database cannot be used, or a run could not be saved."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop.paths import database_path
from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import memos, prepare


def test_a_damaged_database_is_a_message_not_a_crash(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    database_path().parent.mkdir(parents=True, exist_ok=True)
    database_path().write_bytes(b"this is not a database\n" * 2000)
    scripted_server.respond_with(scripted(root=[repl("FINAL(7)")]))
    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
    error = window.workspace.controls.error

    assert window.start_run()
    qtbot.waitUntil(lambda: "not a readable session database" in error.text(), timeout=20_000)
    assert error.text().startswith(f"Not started: session database {database_path()}")
    assert not window.starter.running
    assert scripted_server.chat_requests() == []
    box = window.browse_sessions()
    assert box is not None
    assert "move it aside" in box.text()
    box.close()


def test_the_answer_card_says_when_the_run_was_not_saved(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(
        scripted(root=[repl("print('x' * 200_000)"), repl("FINAL('7 zebrafish')")])
    )
    window.prefs.set_prices_text("openai/test-model = 0, 0")  # a free local model
    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
    store = window.starter.store()
    writing = store.writing.connection  # the connection the store writes runs with
    pages = writing.execute("PRAGMA page_count").fetchone()[0]
    writing.execute(f"PRAGMA max_page_count = {pages}")  # SQLite answers as a full disk would
    answer = window.workspace.answer

    assert window.start_run()
    qtbot.waitUntil(lambda: window.starter.running, timeout=20_000)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=60_000)
    assert "7 zebrafish" in answer.text.toPlainText(), window.workspace.controls.error.text()
    assert answer.warnings.isVisibleTo(answer)
    assert "the disk is full" in answer.warnings.text()
    assert "not saved in full" in window.status.currentMessage()
