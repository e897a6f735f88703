"""The pacer runs display work at once, then at most once per interval, never losing the last
request; a live run's figures and details catch up without another event."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop.ui.shared.pacer import Pacer
from rlm_desktop.ui.window.main_window import MainWindow
from tests.synthetic_events import run_started
from tests.ui.synthetic import llm_call, rlm_call_start

INTERVAL_MS = 100


def test_requests_in_one_interval_are_run_once_at_its_end(qtbot: QtBot) -> None:
    runs: list[int] = []
    state = {"value": 0}
    pacer = Pacer(lambda: runs.append(state["value"]), INTERVAL_MS)
    pacer.request()
    assert runs == [0], "an idle pacer runs at once"
    for value in (1, 2, 3):
        state["value"] = value
        pacer.request()
    assert runs == [0]
    assert pacer.waiting
    qtbot.waitUntil(lambda: len(runs) == 2, timeout=2000)
    assert runs == [0, 3], "the requests of one interval are run once, with the latest state"
    qtbot.wait(INTERVAL_MS * 3)
    assert runs == [0, 3], "and nothing runs without a request"


def test_flush_runs_what_waits_and_cancel_drops_it(qtbot: QtBot) -> None:
    runs: list[str] = []
    pacer = Pacer(lambda: runs.append("ran"), INTERVAL_MS)
    pacer.flush()
    assert runs == [], "nothing waits"
    pacer.request()
    pacer.request()
    pacer.flush()
    assert runs == ["ran", "ran"]
    pacer.request()
    pacer.cancel()
    pacer.request()
    assert runs == ["ran", "ran", "ran"], "after cancel the next request runs at once"
    pacer.request()
    pacer.cancel()
    qtbot.wait(INTERVAL_MS * 3)
    assert runs == ["ran", "ran", "ran"]


def test_a_live_runs_figures_catch_up_without_another_event(
    window: MainWindow, qtbot: QtBot
) -> None:
    window.pages.setCurrentWidget(window.workspace)
    ws = window.workspace
    ws.begin_view(None)
    root_id, opening = rlm_call_start("live", None, 1, 1.0)
    started = run_started("live", 1.0, query="Why?", mode="rlm", settings={}, documents=[])
    ws.bridge.feed([started, *opening])
    for n in range(3):
        ws.bridge.feed(llm_call("live", root_id, 2, 1.5, n))
    assert ws.tree_panel.selected() is ws.model.tree.root
    assert "3 done" not in window.status.calls.text(), "the batches of one interval wait"
    qtbot.waitUntil(lambda: "3 done" in window.status.calls.text(), timeout=5000)
    qtbot.waitUntil(lambda: "3 sub" in ws.details.summary.text(), timeout=5000)
    assert ws.model.tree.run.finished is None
