"""Trajectories in the window: File → Open trajectory… and a file dropped on the window open a
run made elsewhere as a read-only session, its banner saying where it came from; a bad file
changes nothing and says why in one line; the same file twice reopens the session it made.
The welcome page's recorded run plays, with no provider, at a readable pace, to its answer.
The export's tick box carries the documents' text.

The recording shipped in `resources/samples/recorded/` is a real run's export
(`tests/demo_recording.py`); the local session exported here is a real run of the engine over
the scripted server, recorded into the test's own SQLite file.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.importing import import_trajectory
from rlm_desktop.store import Store
from rlm_desktop.ui.window.main_window import MainWindow
from tests.demo_recording import MEMOS_FILE, RECORDED
from tests.engine.scripting import make_run, repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.exporting import exported
from tests.ui.test_file_dialogs import answering

RECORDING = RECORDED / MEMOS_FILE
ANSWER_PART = "€950,000"
IMPORT_S = 30_000


def session_count() -> int:
    store = Store(paths.database_path())
    try:
        return len(store.list_sessions())
    finally:
        store.close()


def opened_by_menu(window: MainWindow, qtbot: QtBot, path: Path) -> None:
    """File → Open trajectory…, the file's path typed into the dialog, as a user does."""
    answering(qtbot, str(path))
    window.open_trajectory_action.trigger()
    qtbot.waitUntil(lambda: window.trajectories.opening is not None, timeout=5_000)
    task = window.trajectories.opening
    assert task is not None
    qtbot.waitUntil(task.done, timeout=IMPORT_S)


def drop(widget: QWidget, *files: Path) -> QDropEvent:
    """Drag `files` over `widget` and drop them, as a file manager does."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path)) for path in files])
    centre = widget.rect().center()
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(centre, Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    dropped = QDropEvent(QPointF(centre), Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(widget, dropped)
    return dropped


def test_file_open_trajectory_opens_a_run_made_elsewhere_read_only(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    shared = tmp_path / "trajectory_heron.jsonl"
    shutil.copy(RECORDING, shared)
    file_menu = window.menuBar().actions()[0].menu()
    assert window.open_trajectory_action in file_menu.actions()
    assert window.open_trajectory_action.shortcut().toString() == "Ctrl+Shift+T"
    opened_by_menu(window, qtbot, shared)
    ws = window.workspace
    assert ws.reviewing is not None
    banner = ws.review_label.text()
    assert banner.startswith("Imported from RLM Desktop export trajectory_heron.jsonl · ")
    assert "· read-only" in banner
    assert banner.endswith("▸ what the file left out (hover)")  # our export has no streaming
    assert "how each reply streamed in" in ws.review_label.toolTip()
    assert ANSWER_PART in ws.answer.text.toPlainText()
    tree = ws.model.tree
    assert tree.root is not None
    kinds = sorted(node.kind for node in tree.walk())
    assert kinds.count("rlm") == 2  # the root and its child
    assert kinds.count("llm") >= 6  # the notes on the memos that mention Heron
    assert "trajectory_heron.jsonl" in window.status.currentMessage()
    assert window.trajectories.refusal is None


def test_a_trajectory_dropped_on_the_documents_opens_and_a_document_still_loads(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    pane = window.workspace.documents
    lines = tmp_path / "measurements.jsonl"  # JSON Lines, yet a document, not a trajectory
    lines.write_text('{"tank": "A", "zebrafish": 7}\n{"tank": "B", "zebrafish": 3}\n', "utf-8")
    window.pages.setCurrentWidget(window.workspace)
    drop(pane, lines)
    qtbot.waitUntil(lambda: not pane.loading, timeout=10_000)
    assert [d.name for d in pane.documents()] == ["measurements.jsonl"]
    assert window.workspace.reviewing is None
    drop(pane, RECORDING)
    task = window.trajectories.opening
    assert task is not None
    qtbot.waitUntil(task.done, timeout=IMPORT_S)
    assert window.workspace.reviewing is not None
    assert f"export {MEMOS_FILE}" in window.workspace.review_label.text()
    assert [d.name for d in pane.documents()] != ["measurements.jsonl"]  # the session's own
    window.leave_review()
    assert [d.name for d in pane.documents()] == ["measurements.jsonl"]  # nothing lost


def test_a_trajectory_dropped_while_reviewing_opens_too(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """The documents pane takes no drops under review: the window itself takes a trajectory."""
    opened_by_menu(window, qtbot, RECORDING)
    first = window.workspace.model.tree.run.run_id
    other = tmp_path / "again.jsonl"
    shutil.copy(RECORDING, other)
    drop(window, other)
    task = window.trajectories.opening
    assert task is not None
    qtbot.waitUntil(task.done, timeout=IMPORT_S)
    assert window.workspace.model.tree.run.run_id == first  # the same content: the same session


def test_a_bad_file_says_why_in_one_line_and_changes_nothing(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"type": "metadata", "root_model": "x"}\n{"type": "iteration", "iter', "utf-8")
    window.pages.setCurrentWidget(window.workspace)
    window.workspace.controls.question.setPlainText("my own question")
    opened_by_menu(window, qtbot, bad)
    refusal = window.trajectories.refusal
    assert refusal is not None
    assert refusal.isVisible()
    line = refusal.text()
    assert "notes.jsonl" in line
    assert "\n" not in line
    assert "Traceback" not in line
    assert window.workspace.reviewing is None
    assert window.workspace.controls.question.toPlainText() == "my own question"
    assert session_count() == 0
    refusal.close()


def test_the_same_file_twice_reopens_its_session_and_says_so(
    window: MainWindow, qtbot: QtBot
) -> None:
    opened_by_menu(window, qtbot, RECORDING)
    first = window.workspace.model.tree.run.run_id
    window.leave_review()
    opened_by_menu(window, qtbot, RECORDING)
    assert window.workspace.model.tree.run.run_id == first
    assert "opened before" in window.status.currentMessage()
    assert session_count() == 1


def test_watch_a_recorded_run_plays_it_at_a_readable_pace_with_no_provider(
    window: MainWindow, qtbot: QtBot
) -> None:
    assert window.pages.currentWidget() is window.welcome  # no key, no local server
    assert window.watch_action.isEnabled()  # the Replay menu offers it too
    qtbot.mouseClick(window.welcome.watch_button, Qt.MouseButton.LeftButton)
    task = window.trajectories.opening
    assert task is not None
    qtbot.waitUntil(task.done, timeout=IMPORT_S)
    replay = window.workspace.replay
    assert replay.playing
    player = replay.player
    assert player is not None
    watched = player.duration / (player.speed.factor or 1.0)
    assert 30 <= watched <= 60, watched
    assert replay.bar.speed.currentText().startswith("Readable")
    qtbot.wait(1500)
    assert 0 < player.position < len(player.events)  # coming in, not all at once
    assert window.workspace.answer.isHidden()
    skip = replay.bar.speed.findText("Skip waits")
    replay.bar.speed.setCurrentIndex(skip)  # the presenter hurries it along
    qtbot.waitUntil(lambda: not replay.playing, timeout=30_000)
    assert ANSWER_PART in window.workspace.answer.text.toPlainText()
    assert "Imported from" in window.workspace.review_label.text()
    answer = window.workspace.answer
    # the health check begun at opening survives the replay's restart: the sources come back
    qtbot.waitUntil(lambda: len(answer.sources) == 3, timeout=20_000)
    assert answer.sources_list.isVisible()


def test_the_export_tick_box_carries_the_documents_text(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    secret = "Only the document says this: the kestrel count is 4471."
    document = ContextDocument(name="notes.txt", text=secret, path=str(tmp_path / "notes.txt"))
    task = asyncio.ensure_future(_recorded_with(document))
    qtbot.waitUntil(task.done, timeout=60_000)
    dialog = window.show_sessions()
    assert dialog.with_documents.text() == "with the documents' text"
    plain = exported(qtbot, dialog, tmp_path / "plain.jsonl")
    assert plain is not None
    assert secret not in plain.read_text(encoding="utf-8")
    dialog.with_documents.setChecked(True)
    carried = exported(qtbot, dialog, tmp_path / "carried.jsonl")
    assert carried is not None
    lines = [json.loads(line) for line in carried.read_text(encoding="utf-8").splitlines()]
    assert any(secret in json.dumps(line, ensure_ascii=False) for line in lines)
    dialog.close()


async def _recorded_with(document: ContextDocument) -> str:
    """A real run over `document`, recorded with it (as the window records a run)."""
    server = ScriptedServer().start()
    try:
        server.respond_with(scripted(root=[repl('FINAL("seen")', "Done.")]))
        run = make_run(server, query="What does the note say?", documents=[document])
        store = Store(paths.database_path())
        recorder = store.record(run, documents=[document])
        await run.execute()
        recorder.close()
        store.close()
    finally:
        server.stop()
    return run.run_id


def test_a_file_name_that_reorders_text_shows_inert_in_the_banner(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """The file's name is a colleague's, untrusted: a bidi control in it would make
    `heron‮lmsj.exe` read as something else."""
    hostile = tmp_path / "heron\u202egpj.jsonl"
    shutil.copy(RECORDING, hostile)
    opened_by_menu(window, qtbot, hostile)
    banner = window.workspace.review_label.text()
    assert "\u202e" not in banner
    assert "heron\\u202egpj.jsonl" in banner
    assert "\u202e" not in window.status.currentMessage()


def test_a_saved_import_reopened_still_says_what_its_file_left_out(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """Opened again later (the Sessions dialog, a restart), not only right after its import."""
    log = tmp_path / "dspy-run.json"
    log.write_text(
        json.dumps([{"reasoning": "look", "code": "print(len(context))", "output": "12"}]),
        encoding="utf-8",
    )
    imported = import_trajectory(window.starter.store(), log)
    assert imported.left_out
    assert window.open_session(imported.session_id)
    label = window.workspace.review_label
    assert "left out" in label.text()
    assert imported.left_out[0].split()[0] in label.toolTip()
    assert "<b>" not in label.toolTip().replace("&lt;b&gt;", "")  # escaped, never markup
