"""Comparing two real recorded runs from the session browser: select two, press Compare, and
the window shows what differs, the answers' diff, and both trees and timelines."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QItemSelectionModel
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.review.compare import Line
from rlm_desktop.store import Store
from rlm_desktop.ui.compare.dialog import MAX_COLUMN_PX, CompareDialog, answer_html, lines_table
from rlm_desktop.ui.sessions.dialog import SessionsDialog
from rlm_desktop.ui.window.main_window import MainWindow
from tests.review.recorded import MODELS, Plan, record_runs
from tests.scripted_server import ScriptedServer

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
