"""The status bar reads a run's cost the way the rest of the app does, unpriced calls included."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop.engine import events as ev
from rlm_desktop.review.call_tree import CallTree
from rlm_desktop.ui.run.status_bar import RunStatusBar
from tests import synthetic_events as se


def budget(cost: float, unpriced_calls: int) -> ev.BudgetUpdated:
    return ev.BudgetUpdated(
        run_id="r", cost_usd=cost, tokens=1_000, sub_calls=3, in_flight=0,
        unpriced_calls=unpriced_calls,
    )  # fmt: skip


def test_cost_with_and_without_prices(qtbot: QtBot) -> None:
    bar = RunStatusBar()
    qtbot.addWidget(bar)
    bar.max_cost_usd = 1.0
    tree = CallTree()
    started = se.run_started("r", 1_700_000_000.0, query="q", mode="rlm", settings={}, documents=[])
    tree.apply([started, budget(0.0, 3)])
    bar.update_from(tree)
    assert bar.cost.text() == "Cost unknown: 3 calls to unpriced models"
    tree.apply([budget(0.25, 2)])
    bar.update_from(tree)
    assert bar.cost.text() == "Cost $0.250 plus unpriced calls of $1.00"
    assert "2 calls to models without a price" in bar.cost.toolTip()
    tree.apply([budget(0.25, 0)])
    bar.update_from(tree)
    assert bar.cost.text() == "Cost $0.250 of $1.00"
    assert bar.cost.toolTip() == ""


def test_a_long_message_is_read_whole_and_the_figures_come_back(qtbot: QtBot) -> None:
    bar = RunStatusBar()
    qtbot.addWidget(bar)
    bar.resize(600, 30)
    bar.show()
    figures = (bar.elapsed, bar.cost, bar.tokens, bar.calls)
    for label, text in zip(figures, ("Elapsed 6.51 s", "Cost $0 of $1.00", "Tokens 645", "Sub-calls 0 running · 4 done"), strict=True):  # fmt: skip
        label.setText(text)
    bar.showMessage("Saved")
    assert all(label.isVisible() for label in figures)  # a short one fits beside them
    bar.showMessage("The documents pane is folded to make room (View → Documents pane brings it back).")  # fmt: skip
    assert not any(label.isVisible() for label in figures)
    bar.clearMessage()
    assert all(label.isVisible() for label in figures)
