"""The window tells when the session database cannot be used, or a run could not be saved."""

from __future__ import annotations

import sqlite3

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


def test_stop_while_the_runs_record_is_being_opened_leaves_no_session_and_the_next_run_saves(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    """Another program holds the session database for writing as the run's record is opened
    (the record waits for it, beside the window); Stop then says the run did not start, sends
    nothing, and leaves no half-made session behind once the database is free again."""
    scripted_server.respond_with(scripted(root=[repl("FINAL('7 zebrafish')")]))
    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(2))
    store = window.starter.store()
    holder = sqlite3.connect(database_path(), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the database taken for writing by another program
    starting: list[bool] = []
    window.starter.run_starting.connect(lambda: starting.append(True))

    assert window.start_run()
    qtbot.waitUntil(lambda: bool(starting), timeout=20_000)
    qtbot.wait(300)  # the record's opening is waiting for the database
    window.stop_run()
    assert window.status.currentMessage() == "Stopped before the run started."
    assert window.workspace.controls.run_button.isEnabled()
    holder.execute("ROLLBACK")
    holder.close()
    qtbot.wait(1500)  # the record, made once the database is free, is closed unused
    assert store.list_sessions() == []
    assert scripted_server.chat_requests() == []

    assert window.start_run()
    qtbot.waitUntil(lambda: window.starter.running, timeout=20_000)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=60_000)
    assert "7 zebrafish" in window.workspace.answer.text.toPlainText()
    (saved,) = store.list_sessions()
    assert saved["status"] == "completed"
    assert len(store.document_texts(saved["id"])) == 2
