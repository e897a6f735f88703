"""A sub-call's row and details name the parent's cell that made it (a saved fan-out)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.window.main_window import MainWindow
from tests.review.recorded_runs import FANOUT
from tests.ui.test_replay import opened, recorded


def test_a_sub_calls_row_and_details_name_the_cell_that_made_it(
    window: MainWindow, qtbot: QtBot
) -> None:
    run = recorded(qtbot, FANOUT)
    ws, _clock = opened(window, run.session_id)
    root = ws.model.tree.root
    assert root is not None
    child = root.children[2]
    tip = ws.model.data(ws.model.index_of(child, 0), Qt.ItemDataRole.ToolTipRole)
    assert f"made by {root.call_id}'s cell 1, turn 1" in tip
    ws.tree_panel.select(child)
    assert f"made by {root.call_id}'s cell 1, turn 1" in ws.details.summary.text()
    ws.tree_panel.select(root)
    assert "made by" not in ws.details.summary.text()
