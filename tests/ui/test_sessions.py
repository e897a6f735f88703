"""Saved sessions open read-only through the live path, even ones cut off mid-run."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.store import Store
from rlm_desktop.ui.main_window import MainWindow
from tests.ui.synthetic import synthetic_run


class _Recorded:
    """What `Store.record` needs from a run: an id and a bus."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.bus = EventBus()


def record(run_id: str, *, finish: bool) -> None:
    store = Store(paths.database_path())
    run = _Recorded(run_id)
    recorder = store.record(run)
    for event in synthetic_run(fanout=3, run_id=run_id, finish=finish):
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
