"""Saved sessions open read-only through the live path, even ones cut off mid-run; a search
says where it found the text; an export's format is the file type chosen."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QComboBox, QFileDialog
from pytestqt.qtbot import QtBot

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.events import Event, RunFinished, RunStarted
from rlm_desktop.evaluation.records import EvaluationRecords
from rlm_desktop.store import Store
from rlm_desktop.ui.sessions.dialog import COLUMNS, FOUND, ID_ROLE, MATCH, SANDBOX, SessionsDialog
from rlm_desktop.ui.sessions.snippet import HTML_ROLE
from rlm_desktop.ui.window.main_window import MainWindow
from tests.store.searchable import ANSWER, searchable_run
from tests.ui.exporting import exported
from tests.ui.synthetic import synthetic_run


class _Recorded:
    """What `Store.record` needs from a run: an id and a bus."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.bus = EventBus()


def record(run_id: str, *, finish: bool) -> None:
    record_events(run_id, synthetic_run(fanout=3, run_id=run_id, finish=finish))


def record_events(run_id: str, events: Iterable[Event]) -> None:
    store = Store(paths.database_path())
    run = _Recorded(run_id)
    recorder = store.record(run)
    for event in events:
        run.bus.publish(event)
    recorder.close()
    store.close()


def test_an_interrupted_session_shows_its_calls_as_interrupted(window: MainWindow) -> None:
    record("cut-short", finish=False)
    assert window.open_session("cut-short")
    ws = window.workspace
    tree = ws.model.tree
    assert tree.root is not None
    assert tree.root.status == "interrupted"
    assert [n.status for n in tree.root.children[:3]] == ["ok", "ok", "ok"]
    assert tree.sub_calls_running == 0
    assert "interrupted" in ws.review_label.text()
    assert not ws.answer.isVisible()
    assert window.status.elapsed.text() == "Elapsed 4.00 s"
    assert ws.model.data(ws.model.index_of(tree.root, 7)) == "4.00 s"


def test_search_and_delete_in_the_browser(window: MainWindow, qtbot: QtBot) -> None:
    record("first-run", finish=True)
    record("second-run", finish=True)
    dialog = window.show_sessions()
    assert dialog.table.rowCount() == 2
    dialog.search.setText("nothing like this")
    dialog.reload()
    assert dialog.table.rowCount() == 0
    assert not dialog.open_button.isEnabled()
    dialog.search.setText("")
    dialog.reload()
    assert dialog.select_id("first-run")
    assert dialog.delete_selected(confirm=False) == "first-run"
    assert dialog.table.rowCount() == 1
    assert dialog.selected_id() == "second-run"


def test_a_session_still_being_recorded_is_not_deleted(window: MainWindow) -> None:
    record("finished-one", finish=True)
    store = Store(paths.database_path())
    live = _Recorded("still-running")
    recorder = store.record(live)
    for event in synthetic_run(fanout=2, run_id="still-running", finish=False):
        live.bus.publish(event)
    recorder.flush()
    dialog = window.show_sessions()
    assert dialog.select_id("still-running")
    assert dialog.delete_selected(confirm=False) is None
    assert "still running" in dialog.message.text()
    assert dialog.select_id("still-running")
    recorder.close()
    store.close()


def _search(dialog: SessionsDialog, text: str) -> None:
    dialog.search.setText(text)
    dialog.reload()


def test_a_search_says_where_it_found_the_text_and_opens_that_session(
    window: MainWindow,
) -> None:
    record_events("zoo-older", searchable_run("zoo-older", start=1_700_000_000.0))
    record("other-run", finish=True)
    record_events("zoo-newer", searchable_run("zoo-newer", start=1_800_000_000.0))
    dialog = window.show_sessions()
    table = dialog.table
    assert table.isColumnHidden(FOUND)
    assert table.isColumnHidden(MATCH)
    assert table.rowCount() == 3

    _search(dialog, "platypus")
    assert dialog.count.text() == "2 sessions matching “platypus”"
    header = table.horizontalHeader()
    assert [header.visualIndex(c) for c in (FOUND, MATCH)] == [2, 3]
    assert not table.isColumnHidden(FOUND)
    assert not table.isColumnHidden(MATCH)
    assert table.isColumnHidden(COLUMNS.index("Documents"))
    assert [table.item(row, FOUND).text() for row in range(2)] == [
        "output · root call · turn 1 · cell 1"
    ] * 2
    match = table.item(0, MATCH)
    assert match.text() == "tank B: [platypus]"
    assert match.data(HTML_ROLE) == "tank B: <b>platypus</b>"
    assert dialog.selected_id() == "zoo-newer"

    _search(dialog, "tank")
    found = table.item(0, FOUND)
    assert found.text() == "question  (+3 more)"
    assert found.toolTip().splitlines() == [
        "question: Which [tank] holds the axolotl?",
        "answer: The axolotl and a gecko share [tank] B.",
        "prompt · LLM call c2: Is [tank] C empty?",  # the shorter text ranks first
        "… and 2 more places",
    ]

    _search(dialog, "tapir")
    assert table.item(0, FOUND).text() == "error · LLM call c2"
    assert dialog.select_id("zoo-older")
    dialog.open_selected()
    ws = window.workspace
    assert ws.reviewing is not None
    assert fmt.short_session_id("zoo-older") in ws.reviewing
    assert ANSWER in ws.answer.text.toPlainText()
    selected = ws.tree_panel.selected()
    assert selected is not None
    assert selected.call_id == "c2", "the session opens at the call where the text was found"


def test_the_save_dialogs_file_type_decides_the_export_format(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    record_events("zoo-run", searchable_run("zoo-run"))
    dialog = window.show_sessions()
    seen: dict[str, object] = {}

    def choose_json_lines() -> None:
        saving = QApplication.activeModalWidget()
        assert isinstance(saving, QFileDialog)
        seen["filters"] = saving.nameFilters()
        seen["name"] = Path(saving.selectedFiles()[0]).name
        types = saving.findChild(QComboBox, "fileTypeCombo")
        assert types is not None
        types.setFocus()
        qtbot.keyClick(types, Qt.Key.Key_Down)  # the next file type: JSON Lines
        seen["renamed"] = Path(saving.selectedFiles()[0]).name
        saving.selectFile(str(tmp_path / seen["renamed"]))
        saving.accept()

    QTimer.singleShot(0, choose_json_lines)
    written = exported(qtbot, dialog)
    assert seen == {
        "filters": [
            "Markdown (*.md)",
            "JSON Lines (*.jsonl)",
            "HTML report (*.html)",
            "OTLP/JSON traces (*.json)",
            "OTLP protobuf traces (*.pb)",
        ],
        "name": "rlm-session-zoo-run.md",
        "renamed": "rlm-session-zoo-run.jsonl",
    }
    assert written == tmp_path / "rlm-session-zoo-run.jsonl"
    lines = written.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["type"] == "metadata"
    assert dialog.message.text() == f"Exported to {written}."


def test_an_export_to_a_path_takes_its_format_from_the_extension(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    record_events("zoo-run", searchable_run("zoo-run"))
    dialog = window.show_sessions()
    traces = exported(qtbot, dialog, tmp_path / "trace.json")
    assert traces is not None
    assert "resourceSpans" in json.loads(traces.read_text(encoding="utf-8"))
    notes = exported(qtbot, dialog, tmp_path / "notes.md")
    assert notes is not None
    assert notes.read_text(encoding="utf-8").startswith("#")


def test_an_export_is_made_beside_the_window_one_at_a_time_and_a_bad_folder_is_one_line(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """A big session's export takes seconds: the dialog says it is under way and the window
    goes on meanwhile; a second export waits its turn; a folder that cannot be written to is
    said in one line and loses nothing."""
    store = Store(paths.database_path())
    run = _Recorded("big-run")
    texts = [f"report {n}\n" + "figures and findings " * 100_000 for n in range(8)]
    documents = [ContextDocument(name=f"report-{n}.txt", text=t) for n, t in enumerate(texts)]
    recorder = store.record(run, documents=documents)
    for event in synthetic_run(fanout=2, run_id="big-run"):
        run.bus.publish(event)
    recorder.close()
    store.close()
    dialog = window.show_sessions()
    dialog.with_documents.setChecked(True)
    target = tmp_path / "big.jsonl"

    pending = dialog.export_selected(target)
    assert pending is not None
    assert not pending.done()  # returned to the loop, not blocking it
    assert dialog.message.text() == f"Exporting to {target}…"
    assert dialog.export_selected(tmp_path / "again.md") is None
    assert dialog.message.text() == "An export is under way: wait for it to finish."
    qtbot.waitUntil(pending.done, timeout=60_000)
    assert pending.result() == target
    assert dialog.message.text() == f"Exported to {target}."
    carried = target.read_text(encoding="utf-8")
    assert all(f"report {n}\\n" in carried for n in range(8))
    assert not (tmp_path / "again.md").exists()

    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert exported(qtbot, dialog, blocked / "big.md") is None
    assert dialog.message.text() == (
        f"Could not write {blocked / 'big.md'}: Not a directory. Choose another folder."
    )
    assert dialog.table.rowCount() == 1
    assert exported(qtbot, dialog, tmp_path / "after.md") == tmp_path / "after.md"
    assert dialog.message.text() == (
        f"Exported to {tmp_path / 'after.md'}. Without the documents' text: only a JSON Lines "
        "export carries it."
    )
    assert "figures and findings figures" not in (tmp_path / "after.md").read_text("utf-8")


def test_the_chosen_file_type_sets_the_extension_unless_the_name_has_its_own(
    qtbot: QtBot, tmp_path: Path
) -> None:
    from PySide6.QtWidgets import QWidget

    from rlm_desktop.ui.sessions.export_target import ExportTarget, export_dialog

    parent = QWidget()
    qtbot.addWidget(parent)
    cases = [
        ("JSON Lines (*.jsonl)", "report", "report.jsonl", "jsonl"),
        ("JSON Lines (*.jsonl)", "report.md", "report.jsonl", "jsonl"),
        ("OTLP/JSON traces (*.json)", "trace.jsonl", "trace.json", "otlp"),
        ("Markdown (*.md)", "notes.txt", "notes.txt", "md"),
        ("OTLP protobuf traces (*.pb)", "trace", "trace.pb", "otlp-proto"),
        ("HTML report (*.html)", "report.md", "report.html", "html"),
    ]
    for name_filter, typed, written, fmt_name in cases:
        saving = export_dialog(parent, "any-id")
        saving.selectNameFilter(name_filter)
        saving.selectFile(str(tmp_path / typed))
        assert ExportTarget.chosen(saving) == ExportTarget(tmp_path / written, fmt_name), typed


SANDBOX_LEVEL = "landlock+netns+pidns"
LONG_SUB_MODEL = "openai/a-rather-long-sub-model-name-for-summaries-q4_k_m"


def _record_marked(run_id: str, t0: float, *, evaluation: str = "", sub_model: str = "") -> None:
    """A finished run under the same sandbox as the rest; `evaluation` marks it in its settings
    as a trial of that evaluation, as the evaluation runner's `RunConfig` does."""

    def marked(event: Event) -> Event:
        if isinstance(event, RunStarted):
            settings = {**event.settings, **({"evaluation_id": evaluation} if evaluation else {})}
            return replace(event, settings=settings, sub_model=sub_model or event.sub_model)
        if isinstance(event, RunFinished):
            return replace(event, sandbox=SANDBOX_LEVEL)
        return event

    record_events(run_id, (marked(e) for e in synthetic_run(fanout=2, run_id=run_id, t0=t0)))


def test_the_list_gives_the_question_room_and_leaves_evaluation_trials_out(
    window: MainWindow, qtbot: QtBot
) -> None:
    """Three questions of the analyst's and two evaluation trials (one marked by its settings,
    one only by the evaluation's own tag): the trials are left out and counted, the Sandbox
    column, the same in every row, gives way to a line naming it, and the question column
    takes the room."""
    _record_marked("own-1", 1_700_000_000.0)
    _record_marked("own-2", 1_700_000_100.0, sub_model=LONG_SUB_MODEL)
    _record_marked("trial-1", 1_700_000_200.0, evaluation="ev-1")
    _record_marked("trial-2", 1_700_000_300.0)
    _record_marked("own-3", 1_700_000_400.0)
    store = Store(paths.database_path())
    EvaluationRecords(store).tag("trial-2", "ev-1", "depth-1", "needle-0")
    store.close()

    dialog = window.show_sessions()
    dialog.resize(1024, 640)
    qtbot.waitExposed(dialog)
    table = dialog.table

    def listed() -> list[str]:
        return [table.item(r, 0).data(ID_ROLE) for r in range(table.rowCount())]

    assert listed() == ["own-3", "own-2", "own-1"]
    assert not dialog.show_trials.isChecked()
    assert dialog.show_trials.isVisible()
    assert "2 evaluation runs hidden" in dialog.count.text()
    assert table.isColumnHidden(SANDBOX)
    assert f"Sandbox kernel ({SANDBOX_LEVEL})" in dialog.count.text()

    models = COLUMNS.index("Models")
    assert not table.isColumnHidden(models)  # the long sub-model sets one row apart
    question = COLUMNS.index("Question")
    shown = [c for c in range(len(COLUMNS)) if not table.isColumnHidden(c)]
    widths = {COLUMNS[c]: table.columnWidth(c) for c in shown}
    room = table.viewport().width()
    assert widths["Question"] >= 0.4 * room, widths
    assert widths["Question"] == max(widths.values()), widths
    assert sum(widths.values()) <= room, widths  # nothing pushed out of sight
    assert table.horizontalScrollBar().maximum() == 0
    for c in shown:  # a narrow column fits its header
        if c != question:
            header = table.horizontalHeader()
            assert table.columnWidth(c) >= header.sectionSizeFromContents(c).width() - 1
    long_row = listed().index("own-2")
    assert LONG_SUB_MODEL in table.item(long_row, models).toolTip()
    dialog.grab().save("/tmp/sessions-own.png")

    dialog.show_trials.click()
    assert listed() == ["own-3", "trial-2", "trial-1", "own-2", "own-1"]
    assert "2 evaluation runs among them" in dialog.count.text()
    trial_row = listed().index("trial-2")
    assert table.item(trial_row, question).toolTip().startswith("Evaluation trial: ")
    assert table.item(trial_row, question).text() == "Evaluation · What is this about?"
    assert table.item(trial_row, question).font().italic()
    assert not table.item(listed().index("own-3"), question).font().italic()
    dialog.grab().save("/tmp/sessions-with-trials.png")

    dialog.show_trials.click()
    _search(dialog, "What is this about")  # a search leaves the trials out too
    assert sorted(listed()) == ["own-1", "own-2", "own-3"]
    assert "2 evaluation runs hidden" in dialog.count.text()


def test_a_crafted_session_is_shown_damaged_and_never_deleted(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """A shared sessions.db whose id is a folder of the user's (issue #41): the row is listed,
    marked damaged, and neither a click nor Delete reaches it; the folder stays."""
    victim = tmp_path / "Documents"
    victim.mkdir()
    (victim / "thesis.txt").write_text("four years of work")
    record(str(victim), finish=True)
    record("sound-run", finish=True)
    dialog = window.show_sessions()
    rows = {dialog.table.item(r, 0).data(ID_ROLE): r for r in range(dialog.table.rowCount())}
    damaged = rows[str(victim)]
    status = dialog.table.item(damaged, COLUMNS.index("Status")).text()
    assert status == "damaged"
    assert "Damaged" in dialog.table.item(damaged, 1).toolTip()
    health = dialog.table.item(damaged, COLUMNS.index("Health"))
    assert health.text() == "—"
    assert not health.flags() & Qt.ItemFlag.ItemIsSelectable
    assert dialog.selected_id() == "sound-run"  # the list opens on a row that can be acted on
    rect = dialog.table.visualItemRect(dialog.table.item(damaged, 1))
    qtbot.mouseClick(dialog.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    dialog.select_id(str(victim))
    assert dialog.selected_id() != str(victim)
    dialog.delete_selected(confirm=False)
    assert (victim / "thesis.txt").read_text() == "four years of work"
    assert str(victim) in {
        dialog.table.item(r, 0).data(ID_ROLE) for r in range(dialog.table.rowCount())
    }


def test_a_session_of_the_wrong_kinds_is_listed_damaged_and_not_opened(
    window: MainWindow,
) -> None:
    """A shared sessions.db holding text where a number belongs (issue #41): listed as damaged,
    and opened from anywhere else (the conversations list, the dashboard) it is refused in one
    line, the window unharmed."""
    record("sound-run", finish=True)
    record("crafted-run", finish=True)
    with sqlite3.connect(paths.database_path()) as db:
        db.execute("UPDATE sessions SET cost_usd = 'free' WHERE id = 'crafted-run'")
        db.execute("UPDATE calls SET depth = 'deep' WHERE session_id = 'crafted-run'")
    dialog = window.show_sessions()
    rows = {dialog.table.item(r, 0).data(ID_ROLE): r for r in range(dialog.table.rowCount())}
    assert dialog.table.item(rows["crafted-run"], COLUMNS.index("Status")).text() == "damaged"
    assert not dialog.select_id("crafted-run") or dialog.selected_id() != "crafted-run"
    dialog.reject()
    assert not window.open_session("crafted-run")
    assert window.pages.currentWidget() is window.workspace
    assert window.workspace.controls.error.isVisible()
    assert "is damaged: its sessions.cost_usd holds" in window.workspace.controls.error.text()
    assert window.open_session("sound-run")
