"""Ask a follow-up in the same window: the next question goes on in the REPL of the last one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rlm_desktop.paths import database_path
from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import prepare

FIRST = "Which regions are listed?"
SECOND = "And the north total doubled, with the addendum?"


def run_and_wait(window: MainWindow, qtbot: QtBot) -> None:
    window.workspace.controls.run_button.click()
    qtbot.waitUntil(lambda: window.starter.running, timeout=5000)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=60_000)


def test_a_follow_up_goes_on_in_the_same_repl_with_new_documents_as_contexts(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.txt"
    ledger.write_text("north 12\nsouth 30\n", encoding="utf-8")
    addendum = tmp_path / "addendum.txt"
    addendum.write_text("north 5\n", encoding="utf-8")
    scripted_server.respond_with(
        scripted(
            {
                FIRST: [repl("totals = {'north': 12, 'south': 30}\nFINAL(', '.join(totals))")],
                SECOND: [repl("FINAL(2 * totals['north'] + int(context_1.split()[1]))")],
            }
        )
    )
    prepare(window, qtbot, scripted_server, FIRST, [ledger])
    controls = window.workspace.controls
    bar = controls.follow_up
    assert bar.isHidden()
    run_and_wait(window, qtbot)
    assert not bar.ask_button.isHidden()

    qtbot.mouseClick(bar.ask_button, Qt.MouseButton.LeftButton)
    assert controls.question.toPlainText() == ""
    assert FIRST in bar.label.text()
    assert not bar.new_button.isHidden()
    controls.question.setPlainText(SECOND)
    window.workspace.documents.add_paths([addendum])
    qtbot.waitUntil(lambda: not window.workspace.documents.loading, timeout=20_000)
    run_and_wait(window, qtbot)

    assert "29" in window.workspace.answer.text.toPlainText()
    with sqlite3.connect(database_path()) as db:
        rows = db.execute(
            "SELECT id, query, follows, conversation_id FROM sessions ORDER BY started_at"
        ).fetchall()
    first_id = rows[0][0]
    assert [row[1:] for row in rows] == [(FIRST, None, None), (SECOND, first_id, first_id)]
    link = bar.link()  # the conversation goes on: the next question follows this one
    assert link is not None
    assert (link.follows, link.conversation_id, link.query) == (rows[1][0], first_id, SECOND)

    browser = window.show_sessions()
    listed = [browser.table.item(row, 1).text() for row in range(browser.table.rowCount())]
    assert listed == [FIRST, f"↳ {SECOND}"]

    bar.end()
    assert bar.link() is None
    assert not bar.ask_button.isHidden()
