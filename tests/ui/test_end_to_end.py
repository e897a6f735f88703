"""The real window drives the real engine against the scripted OpenAI-compatible server."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rlm_desktop import formatting as fmt
from rlm_desktop.paths import data_dir, database_path, resource
from rlm_desktop.providers import keys
from rlm_desktop.ui.tree.columns import COLUMNS
from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import Reply, ScriptedServer
from tests.ui.exporting import exported as export_from
from tests.ui.launch_script import ANSWER, make_responder

SECRET = "sk-test-SECRET-9f8e7d6c5b4a"


def prepare(
    window: MainWindow, qtbot: QtBot, server: ScriptedServer, question: str, paths: list[Path]
) -> None:
    """Point the window at the scripted server, load documents, fill in the question."""
    window.prefs.set_base_url("local", server.base_url)
    window.starter.apply_preferences()
    window.pages.setCurrentWidget(window.workspace)
    controls = window.workspace.controls
    controls.endpoint.setCurrentIndex(controls.endpoint.findData(server.base_url))
    controls.model.setEditText("openai/test-model")
    controls.mode.setCurrentIndex(controls.mode.findData("rlm"))
    controls.max_depth.setValue(2)
    controls.question.setPlainText(question)
    window.workspace.documents.add_paths(paths)
    qtbot.waitUntil(lambda: not window.workspace.documents.loading, timeout=20_000)


def tree_shape(window: MainWindow) -> list[tuple[str, int, str]]:
    return [(n.kind, n.level, n.status) for n in window.workspace.model.tree.walk()]


def memos(n: int) -> list[Path]:
    return sorted(resource("samples", "memos").iterdir())[:n]


def test_run_grows_the_tree_and_fills_the_console(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(make_responder(fanout=3))
    keys.set_key("local", SECRET)
    prepare(window, qtbot, scripted_server, "When is the launch?", memos(3))
    ws = window.workspace
    window.activateWindow()
    qtbot.keyClick(ws.controls.question, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.starter.running, timeout=5000)
    assert not ws.controls.stop_button.isHidden()
    assert ws.controls.stop_button.isEnabled()
    qtbot.waitUntil(lambda: ws.answer.isVisible(), timeout=60_000)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=10_000)

    tree = ws.model.tree
    root = tree.root
    assert root is not None
    assert root.kind == "rlm"
    kinds = [child.kind for child in root.children]
    assert kinds.count("llm") == 3
    assert kinds.count("rlm") == 1
    child = next(c for c in root.children if c.kind == "rlm")
    assert [g.level for g in child.children] == [2]
    assert ws.model.rowCount(ws.model.index_of(child)) == 1
    assert ANSWER in ws.answer.text.toPlainText()
    assert "Sub-calls 0 running · 5 done" in window.status.calls.text()

    assert ws.tree_panel.select(root)
    cells = ws.console.cell_views()
    assert len(cells) == 2
    first = cells[0]
    assert "llm_query_batched" in first.code.toPlainText()
    highlighted = first.code.document().firstBlock().layout().formats()
    assert len({r.format.foreground().color().name() for r in highlighted}) >= 2
    stdout = first.outputs[0].view.toPlainText()
    assert "summaries: 3" in stdout
    assert "child: child found: 14 March" in stdout

    assert ws.tree_panel.select(child.children[0])
    assert ws.details.response.toPlainText() == "14 March"
    assert "When is the launch?" in ws.details.prompt.toPlainText()

    sent = [{k.lower(): v for k, v in h.items()} for h in scripted_server.headers]
    assert all(h.get("authorization") == f"Bearer {SECRET}" for h in sent)
    leaked = [p for p in data_dir().rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaked == []
    with sqlite3.connect(database_path()) as db:
        status = db.execute("SELECT status FROM sessions").fetchall()
    assert status == [("completed",)]


def test_stop_cancels_a_long_fan_out(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(make_responder(fanout=7, sub_delay_s=30.0))
    prepare(window, qtbot, scripted_server, "When is the launch?", memos(7))
    ws = window.workspace
    ws.controls.run_button.click()
    qtbot.waitUntil(lambda: ws.model.tree.sub_calls_running >= 7, timeout=30_000)
    pressed = time.monotonic()
    qtbot.keyClick(ws.controls.question, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=5000)
    assert time.monotonic() - pressed < 1.0
    finished = ws.model.tree.run.finished
    assert finished is not None
    assert finished.status == "cancelled"
    assert ws.answer.title.text() == "No answer (cancelled)"
    assert ws.answer.tone == "stopped"
    window.status.update_from(ws.model.tree)
    assert window.status.calls.text() == "Sub-calls 0 running · 0 done · 7 stopped"
    assert finished.held_tokens > 0  # the seven stopped requests count what they held...
    assert f"({fmt.tokens(finished.held_tokens)} held by requests stopped in flight)" in (
        ws.answer.stats.text()
    )  # ...and the card says so, where the details count only what was reported
    root = ws.model.tree.root
    assert root is not None
    assert ws.tree_panel.select(root)
    open_turn = ws.console.cards[-1]
    assert open_turn.pending.text() == "Stopped while its code ran: cancelled"
    cost = next(n for n, c in enumerate(COLUMNS) if c.title == "Cost")
    costs = {ws.model.data(ws.model.index_of(node, cost)) for node in ws.model.tree.walk()}
    assert costs == {root.cost_text}, "cancelled sub-calls read like the rest"
    assert ws.controls.run_button.isEnabled()
    with sqlite3.connect(database_path()) as db:
        assert db.execute("SELECT status FROM sessions").fetchall() == [("cancelled",)]


def test_saved_session_reopens_with_the_same_tree(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    scripted_server.respond_with(make_responder(fanout=2))
    prepare(window, qtbot, scripted_server, "When is the launch?", memos(2))
    ws = window.workspace
    ws.controls.run_button.click()
    qtbot.waitUntil(lambda: ws.answer.isVisible(), timeout=60_000)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=10_000)
    live = tree_shape(window)
    live_cells = sum(len(t.cells) for t in ws.model.tree.root.turns)  # type: ignore[union-attr]
    scripted_server.stop()

    dialog = window.show_sessions()
    assert dialog.table.rowCount() == 1
    assert dialog.table.item(0, 1).text() == "When is the launch?"
    assert dialog.table.item(0, 4).text() == "completed"
    exported = export_from(qtbot, dialog, tmp_path / "session.md")
    assert exported is not None
    assert ANSWER in exported.read_text(encoding="utf-8")
    dialog.search.setText("launch")
    dialog.reload()
    assert dialog.table.rowCount() == 1
    dialog.open_selected()

    assert ws.reviewing is not None
    assert not ws.review_bar.isHidden()
    assert ws.controls.isHidden()
    assert tree_shape(window) == live
    assert ANSWER in ws.answer.text.toPlainText()
    assert [e.name for e in ws.documents.model.entries] == [p.name for p in memos(2)]
    assert ws.tree_panel.select(ws.model.tree.root)  # type: ignore[arg-type]
    assert len(ws.console.cell_views()) == live_cells

    ws.new_run_button.click()
    assert ws.reviewing is None
    assert ws.model.rowCount() == 0
    assert len(ws.documents.documents()) == 2

    dialog = window.show_sessions()
    assert dialog.delete_selected(confirm=False) is not None
    assert dialog.table.rowCount() == 0


def test_closing_the_window_stops_the_run_first(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(make_responder(fanout=4, sub_delay_s=30.0))
    prepare(window, qtbot, scripted_server, "When is the launch?", memos(4))
    ws = window.workspace
    ws.controls.run_button.click()
    qtbot.waitUntil(lambda: ws.model.tree.sub_calls_running >= 4, timeout=30_000)
    window.close()
    assert window.isVisible()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
    assert not window.starter.running
    from rlm_desktop.store import Store

    store = Store(database_path())
    assert [s["status"] for s in store.list_sessions()] == ["cancelled"]
    store.close()


def test_a_refused_key_says_where_to_change_it(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(lambda _request: Reply(content="invalid api key", status=401))
    keys.set_key("local", SECRET)
    prepare(window, qtbot, scripted_server, "When is the launch?", memos(1))
    assert window.start_run()
    answer = window.workspace.answer
    qtbot.waitUntil(answer.isVisible, timeout=30_000)
    assert answer.title.text() == "No answer (error)"
    text = answer.text.toPlainText()
    assert "HTTP 401" in text
    assert "Settings → Providers" in text


def test_a_cell_that_raised_is_marked_and_found_by_next_error(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    turns = [
        repl("rows = context if isinstance(context, list) else [context]"),
        repl("print(len(rows))"),
        repl("rows[99]"),
        repl('FINAL("done")'),
    ]
    scripted_server.respond_with(scripted(root=turns))
    prepare(window, qtbot, scripted_server, "Count the memos", memos(2))
    ws = window.workspace
    ws.controls.run_button.click()
    qtbot.waitUntil(lambda: ws.answer.isVisible(), timeout=60_000)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=10_000)
    root = ws.model.tree.root
    assert root is not None
    assert root.status == "ok"
    assert ws.answer.tone == "ok"
    status = next(n for n, c in enumerate(COLUMNS) if c.title == "Status")
    mark = ws.model.data(ws.model.index_of(root, status), Qt.ItemDataRole.DecorationRole)
    assert mark is not None
    assert ws.tree_panel.next_error() is root
    cells = ws.console.cell_views()
    assert [cell.number for cell in cells] == [1, 2, 3, 4]
    raised = [cell for cell in cells if cell.failed]
    assert len(raised) == 1
    traceback = raised[0].outputs[-1].view.toPlainText()
    assert "IndexError" in traceback
    assert f"<cell {raised[0].number}>" in traceback
