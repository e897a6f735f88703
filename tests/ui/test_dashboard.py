"""The history dashboard over real recorded runs: the marks drawn on each histogram are the
database's own percentiles (computed again with SQL and the statistics module), the filters
narrow them, and a run in the tail is one double-click from opening."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import statistics

import pytest
from PySide6.QtCore import QDate, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.ui.dashboard.dialog import DashboardDialog
from rlm_desktop.ui.dashboard.histogram import HistogramPlot
from rlm_desktop.ui.dashboard.tables import ID_ROLE
from rlm_desktop.ui.window.main_window import MainWindow
from tests.review.recorded import HISTORY, MODELS, PRICED, Plan, record_runs
from tests.scripted_server import ScriptedServer

MEASURES = {
    "cost_usd": f"SELECT cost_usd FROM sessions WHERE {PRICED}",
    "tokens": "SELECT input_tokens + output_tokens FROM sessions WHERE 1",
    "wall_s": "SELECT wall_s FROM sessions WHERE wall_s IS NOT NULL",
    "sub_calls": "SELECT sub_calls FROM sessions WHERE 1",
}


@pytest.fixture
def recorded(scripted_server: ScriptedServer) -> list[str]:
    """The history, recorded before the window's loop exists."""
    return asyncio.run(record_runs(scripted_server, HISTORY))


def _count(sql: str) -> int:
    conn = sqlite3.connect(paths.database_path())
    try:
        return len(conn.execute(sql).fetchall())
    finally:
        conn.close()


def _count_sum(sql: str) -> int:
    conn = sqlite3.connect(paths.database_path())
    try:
        return int(sum(value for (value,) in conn.execute(sql)))
    finally:
        conn.close()


def _reference(sql: str, params: tuple[object, ...] = ()) -> dict[str, float]:
    conn = sqlite3.connect(paths.database_path())
    try:
        values = [float(value) for (value,) in conn.execute(sql, params)]
    finally:
        conn.close()
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"median": statistics.median(values), "p90": cuts[89], "p99": cuts[98], "max": max(values)}  # fmt: skip


def _check_marks(dialog: DashboardDialog, where: str = "", params: tuple[object, ...] = ()) -> None:
    for metric, sql in MEASURES.items():
        drawn = dialog.measures[metric].histogram.mark_values()
        assert drawn == pytest.approx(_reference(sql + where, params)), metric


def test_the_histograms_mark_the_databases_percentiles(
    recorded: list[str], window: MainWindow, qtbot: QtBot
) -> None:
    window.history_action.trigger()  # File → History dashboard…
    (dialog,) = window.findChildren(DashboardDialog)
    qtbot.waitExposed(dialog)
    _check_marks(dialog)
    for metric, sql in MEASURES.items():
        tab = dialog.measures[metric]
        assert sum(tab.histogram.bar_heights()) == _count(sql)
        assert "p99" in tab.summary.text()
    assert "1 with unpriced calls" in dialog.count.text()

    dialog.filters.choose(model=MODELS[1])
    _check_marks(dialog, " AND model = ?", (MODELS[1],))
    assert dialog.by_model.rowCount() == 1
    assert dialog.by_model.item(0, 0).text() == MODELS[1]
    dialog.filters.choose(model=None, profile="small")
    _check_marks(dialog, " AND profile = ?", ("small",))
    dialog.filters.choose(profile=None, status="completed")
    _check_marks(dialog, " AND status = ?", ("completed",))
    dialog.filters.since.setDate(QDate.currentDate().addDays(1))
    assert dialog.measures["cost_usd"].histogram.mark_values() == {}
    assert dialog.measures["cost_usd"].summary.text() == "No run to show."
    assert dialog.measures["cost_usd"].tail.rowCount() == 0
    dialog.filters.since.setDate(QDate.currentDate())
    assert dialog.count.text().startswith(f"{len(HISTORY)} runs")


def test_a_tail_run_opens_with_one_double_click(
    recorded: list[str], window: MainWindow, qtbot: QtBot
) -> None:
    dialog = window.show_dashboard()
    qtbot.waitExposed(dialog)
    dialog.tabs.setCurrentWidget(dialog.measures["sub_calls"])
    tail = dialog.measures["sub_calls"].tail
    top = tail.item(0, 0)
    session_id = top.data(ID_ROLE)
    conn = sqlite3.connect(paths.database_path())
    most = conn.execute("SELECT id FROM sessions ORDER BY sub_calls DESC LIMIT 1").fetchone()[0]
    conn.close()
    assert session_id == most
    rect = tail.visualItemRect(top)
    # A view reads a double-click as a second press right after a click, as the mouse sends it.
    qtbot.mouseClick(tail.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(tail.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: not dialog.isVisible())
    QApplication.processEvents()
    assert window.workspace.reviewing is not None
    assert fmt.short_session_id(most) in window.workspace.reviewing
    assert window.workspace.model.tree.run.run_id == most


LOCAL = "openai/local-model"
FREE = [
    Plan("How many fish in the free tank?", fan_out=2, model=LOCAL),
    Plan("How many fish in the second free tank?", fan_out=5, model=LOCAL),
    Plan("How many fish in the third free tank?", fan_out=9, model=LOCAL, max_depth=1),
]


@pytest.fixture
def free_history(scripted_server: ScriptedServer) -> list[str]:
    """Runs of a model on the user's own server, counted at $0 as the window counts them."""
    return asyncio.run(record_runs(scripted_server, FREE, prices={LOCAL: (0.0, 0.0)}))


def _ticks(histogram: HistogramPlot) -> tuple[str, list[str]]:
    """The bottom axis's label and the tick texts pyqtgraph draws along it for the range shown."""
    axis = histogram.plot.getPlotItem().getAxis("bottom")
    (low, high), _ = histogram.plot.getPlotItem().getViewBox().viewRange()
    texts = [
        text
        for spacing, values in axis.tickValues(low, high, axis.width())
        for text in axis.tickStrings(values, axis.autoSIPrefixScale, spacing)
    ]
    return axis.labelString(), texts


def test_a_history_that_cost_nothing_opens_on_tokens_with_real_units(
    free_history: list[str], window: MainWindow, qtbot: QtBot
) -> None:
    dialog = window.show_dashboard()
    dialog.resize(1024, 640)
    qtbot.waitExposed(dialog)
    cost = dialog.measures["cost_usd"]
    label, ticks = _ticks(cost.histogram)
    assert "(x" not in label, label  # was "(x1e-09)"
    assert ticks
    assert all(tick.startswith("$") for tick in ticks), ticks
    assert "cost $0" in cost.summary.text()
    tokens = dialog.measures["tokens"]
    assert dialog.tabs.currentWidget() is tokens
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Tokens per run"
    assert sum(tokens.histogram.bar_heights()) == len(FREE)
    _check_marks(dialog)
    label, ticks = _ticks(tokens.histogram)
    assert "tokens per run" in label
    assert "(x" not in label
    assert ticks
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", tick) for tick in ticks), ticks
    assert dialog.breakdowns_title.text().startswith("Tokens by model")
    assert dialog.by_model.horizontalHeaderItem(2).text() == "Total tokens"
    total = _count_sum("SELECT input_tokens + output_tokens FROM sessions")
    assert dialog.by_model.item(0, 2).text() == fmt.tokens(total)

    wall = dialog.measures["wall_s"]
    label, ticks = _ticks(wall.histogram)
    assert "(x" not in label
    assert all(tick.endswith(" s") for tick in ticks), ticks
    dialog.grab().save("/tmp/dashboard-free.png")

    dialog.tabs.setCurrentWidget(wall)  # the user's choice stays through a reload
    assert dialog.breakdowns_title.text().startswith("Wall time by model")
    dialog.filters.choose(model=LOCAL)
    assert dialog.tabs.currentWidget() is wall


def test_a_priced_history_opens_on_cost(
    recorded: list[str], window: MainWindow, qtbot: QtBot
) -> None:
    dialog = window.show_dashboard()
    qtbot.waitExposed(dialog)
    assert dialog.tabs.currentWidget() is dialog.measures["cost_usd"]
    label, ticks = _ticks(dialog.measures["cost_usd"].histogram)
    assert "(x" not in label
    assert ticks
    assert all(tick.startswith("$") for tick in ticks), ticks
    assert dialog.by_model.horizontalHeaderItem(2).text() == "Total cost"
