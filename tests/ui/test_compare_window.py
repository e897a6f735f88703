"""Comparing two real recorded runs from the session browser: select two, press Compare, and
the window shows what differs, the answers' diff, and both trees and timelines."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from PySide6.QtCore import QItemSelectionModel
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.events import RunFinished
from rlm_desktop.review.compare import Line
from rlm_desktop.store import Store
from rlm_desktop.ui.compare.dialog import MAX_COLUMN_PX, CompareDialog, answer_html, lines_table
from rlm_desktop.ui.compare.side import RunSide
from rlm_desktop.ui.sessions.dialog import SessionsDialog
from rlm_desktop.ui.window.main_window import MainWindow
from tests.review.recorded import MODELS, Plan, record_runs
from tests.scripted_server import ScriptedServer
from tests.synthetic_events import FakeRun
from tests.ui.synthetic import synthetic_run

OLDER = Plan("Count the fish in tank A.", fan_out=2, answer="There are 7 fish <b>here</b>.")
NEWER = Plan(
    "Count the fish in tank A, again.",
    fan_out=4,
    answer="There are 9 fish <b>here</b>.",
    model=MODELS[1],
    max_depth=1,
)


@pytest.fixture
def recorded(scripted_server: ScriptedServer) -> list[str]:
    """Two runs, recorded before the window's loop exists."""
    return asyncio.run(record_runs(scripted_server, [OLDER, NEWER]))


def _calls(session_id: str) -> list[str]:
    store = Store(paths.database_path())
    try:
        return [call["id"] for call in store.session(session_id)["calls"]]
    finally:
        store.close()


def _select_both(browser: SessionsDialog) -> None:
    rows = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    selection = browser.table.selectionModel()
    selection.clearSelection()
    for row in range(browser.table.rowCount()):
        selection.select(browser.table.model().index(row, 0), rows)


def test_two_sessions_compare_side_by_side(
    recorded: list[str], window: MainWindow, qtbot: QtBot
) -> None:
    older, newer = recorded
    browser = window.show_sessions()
    browser.table.selectRow(0)
    assert browser.compare_selected() is None
    assert "exactly two" in browser.message.text()
    _select_both(browser)
    assert browser.compare_selected() == (older, newer)
    (dialog,) = window.findChildren(CompareDialog)
    qtbot.waitExposed(dialog)

    cells = {
        dialog.table.item(row, 0).text(): row
        for row in range(dialog.table.rowCount())
        if dialog.table.item(row, 0) is not None
    }
    model_row, subs_row = cells["Model"], cells["Sub-calls"]
    assert [dialog.table.item(model_row, c).text() for c in (1, 2)] == list(MODELS)
    assert dialog.table.item(model_row, 1).font().bold()
    assert not dialog.table.item(cells["Documents"], 1).font().bold()
    assert [dialog.table.item(subs_row, c).text() for c in (1, 2, 3)] == ["2", "4", "+2 (+100%)"]

    shown = dialog.answer.toPlainText()
    assert "There are 79 fish <b>here</b>." in shown  # both words kept, the markup as text
    assert "<span" in answer_html(dialog.comparison.answer)

    for side, session_id in ((dialog.left, older), (dialog.right, newer)):
        tree = side.model.tree
        assert sorted(tree.nodes) == sorted(_calls(session_id))
        qtbot.waitUntil(lambda s=side: s.timeline.view is not None)
        view = side.timeline.view
        assert view is not None
        qtbot.waitUntil(lambda v=view, t=tree: len(v.timeline.bars) == len(t.nodes))
        child = tree.root.children[-1] if tree.root else None
        assert child is not None
        side.tree.select(child)
        assert side.tree.selected() is child

    assert browser.isVisible()  # under the comparison, for the next pair
    dialog.close()
    qtbot.waitUntil(lambda: not window.findChildren(CompareDialog))
    assert browser.isVisible()
    assert browser.selected_ids() == [newer, older]  # the pair still chosen
    assert browser.compare_selected() == (older, newer)
    qtbot.waitUntil(lambda: len(window.findChildren(CompareDialog)) == 1)


def test_a_long_value_does_not_push_the_other_columns_out_of_sight(qtbot: QtBot) -> None:
    """Eight documents on one side make a long line: it is elided (its tooltip holds it whole),
    and the Right and Change columns stay in view."""
    names = ", ".join(f"memos/2025-0{n}-01-a-long-memo-title-number-{n}.md" for n in range(1, 9))
    table = lines_table([("Settings", [Line("Documents", "server.log", names)])])
    qtbot.addWidget(table)
    table.resize(760, 300)
    table.show()
    qtbot.waitExposed(table)
    assert table.item(1, 2).toolTip() == names
    assert all(table.columnWidth(column) <= MAX_COLUMN_PX for column in (0, 1, 2))
    assert table.columnViewportPosition(3) < table.viewport().width()  # Change is in view


def test_two_runs_compared_fit_a_small_screen(
    recorded: list[str], window: MainWindow, qtbot: QtBot
) -> None:
    """Side by side, the captions and the timelines' legends wrap rather than widen the dialog
    past a 1024x640 screen; it opens within its screen."""
    dialog = window.compare_sessions(*recorded)
    qtbot.waitExposed(dialog)
    least = dialog.minimumSizeHint()
    assert least.width() <= 1024
    assert least.height() <= 640
    room = window.screen().availableGeometry().size()
    assert dialog.width() <= room.width()
    assert dialog.height() <= room.height()


def _record_lasting(run_id: str, seconds: float, t0: float) -> None:
    """A saved run (root, three sub-calls, a child with its own) stretched to last `seconds`."""
    stretch = seconds / 5.0  # `synthetic_run` lasts five seconds
    store = Store(paths.database_path())
    run = FakeRun(run_id, EventBus())
    recorder = store.record(run)
    for event in synthetic_run(run_id=run_id, t0=t0):
        moved = replace(event, ts=t0 + (event.ts - t0) * stretch)
        if isinstance(moved, RunFinished):
            moved = replace(moved, wall_s=seconds)
        run.bus.publish(moved)
    recorder.close()
    store.close()


def _x_extent(side: RunSide) -> tuple[float, float]:
    view = side.timeline.view
    assert view is not None
    return view.visible_range()[0]


def test_both_timelines_share_the_longer_runs_time_scale(window: MainWindow, qtbot: QtBot) -> None:
    """A 3 s run beside a 30 s run: both time axes span the 30 s, so the short run's bars fill
    a tenth of its plot, and a line marks where it ended; zooming one zooms both; unticking
    "One time scale" fits each to its own run."""
    _record_lasting("quick-run", 3.0, 1_700_000_000.0)
    _record_lasting("slow-run", 30.0, 1_700_001_000.0)
    dialog = window.compare_sessions("quick-run", "slow-run")
    dialog.resize(1024, 640)
    qtbot.waitExposed(dialog)
    left, right = dialog.left, dialog.right
    for side in (left, right):
        qtbot.waitUntil(
            lambda s=side: s.timeline.view is not None and bool(s.timeline.view.timeline.bars)
        )
    view = left.timeline.view
    assert view is not None
    assert max(bar.end for bar in view.timeline.bars) == pytest.approx(3.0)
    (low, high), (r_low, r_high) = _x_extent(left), _x_extent(right)
    assert (low, high) == pytest.approx((r_low, r_high))
    assert low <= 0.0 < 30.0 <= high < 32.0
    assert left.length == pytest.approx(3.0)
    assert right.length == pytest.approx(30.0)
    assert left.timeline.end_line is not None
    assert left.timeline.end_line.isVisible()
    assert left.timeline.end_line.value() == pytest.approx(3.0)
    assert left.scale_note.text() == "Took 3.00 s · 10% of the longer run's 30.0 s"
    assert right.timeline.end_line is None or not right.timeline.end_line.isVisible()
    dialog.grab().save("/tmp/compare-one-scale.png")

    left.timeline.zoom_in()  # the short run read closer, the long one follows
    zoomed = _x_extent(left)
    assert zoomed[1] - zoomed[0] < (high - low) / 1.5
    assert _x_extent(right) == pytest.approx(zoomed)
    left.timeline.fit()
    assert _x_extent(left) == pytest.approx((low, high))

    dialog.one_scale.setChecked(False)
    assert _x_extent(left)[1] == pytest.approx(3.0, rel=0.05)
    assert _x_extent(right)[1] == pytest.approx(30.0, rel=0.05)
    assert not left.timeline.end_line.isVisible()
    dialog.grab().save("/tmp/compare-own-scales.png")
