"""The call details of a saved fan-out: a sub-call names the parent's cell that made it, the root
tells the run's time beside its own (they differ by the run's start-up)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rlm_desktop import formatting as fmt
from rlm_desktop.review.call_tree import CallNode
from rlm_desktop.ui.window.main_window import MainWindow
from rlm_desktop.ui.window.workspace import Workspace
from tests.review.recorded_runs import FANOUT
from tests.ui.test_replay import opened, recorded


def saved_fan_out(window: MainWindow, qtbot: QtBot) -> tuple[Workspace, CallNode]:
    """A fan-out run, recorded and opened in the window: the workspace and its root."""
    run = recorded(qtbot, FANOUT)
    ws, _clock = opened(window, run.session_id)
    root = ws.model.tree.root
    assert root is not None
    return ws, root


def test_a_sub_calls_row_and_details_name_the_cell_that_made_it(
    window: MainWindow, qtbot: QtBot
) -> None:
    ws, root = saved_fan_out(window, qtbot)
    child = root.children[2]
    tip = ws.model.data(ws.model.index_of(child, 0), Qt.ItemDataRole.ToolTipRole)
    assert f"made by {root.call_id}'s cell 1, turn 1" in tip
    ws.tree_panel.select(child)
    assert f"made by {root.call_id}'s cell 1, turn 1" in ws.details.summary.text()
    ws.tree_panel.select(root)
    assert "made by" not in ws.details.summary.text()


def test_the_roots_time_is_told_beside_the_runs_which_the_card_shows(
    window: MainWindow, qtbot: QtBot
) -> None:
    ws, root = saved_fan_out(window, qtbot)
    finished = ws.model.tree.run.finished
    assert finished is not None
    run_time = fmt.seconds(finished.wall_s)
    assert f" · {run_time} in all · " in ws.answer.stats.text()
    ws.tree_panel.select(root)
    assert f"(the run: {run_time} in all, its start-up included)" in ws.details.summary.text()
    ws.tree_panel.select(root.children[0])
    assert "the run:" not in ws.details.summary.text()
