"""History benchmarks: the dashboard over 1,000 saved sessions, computed and drawn.

Run with `make bench` (or `pytest tests/benchmarks/test_history_bench.py -m bench -s`).
"""

from __future__ import annotations

import random
import time

import pytest
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.review.history import load_history
from rlm_desktop.store import Store
from tests.benchmarks.report import record_figure
from tests.store.synthetic import FakeRun, run_events

SESSIONS = 1000
DAY_S = 86_400.0


def _seed_history(store: Store, sessions: int) -> None:
    """`sessions` synthetic runs recorded through the real recorder, spread over 90 days, with
    fan-outs drawn from a long-tailed distribution (a fixed seed)."""
    draw = random.Random(13)
    start = time.time() - 90 * DAY_S
    for n in range(sessions):
        run = FakeRun(f"hist-{n:04d}", EventBus())
        recorder = store.record(run)
        fan_out = max(1, min(60, int(draw.lognormvariate(1.2, 0.8))))
        for event in run_events(
            run.run_id, turns=draw.randint(1, 3), calls_per_turn=fan_out, start=start
        ):
            run.bus.publish(event)
        recorder.close()
        start += 90 * DAY_S / sessions


@pytest.mark.bench
def test_dashboard_over_1000_sessions(qtbot: QtBot, qloop: object) -> None:
    from rlm_desktop.ui.dashboard.dialog import DashboardDialog

    store = Store(paths.database_path())
    try:
        seeding = time.perf_counter()
        _seed_history(store, SESSIONS)
        seeded = time.perf_counter() - seeding

        started = time.perf_counter()
        history = load_history(store)
        computed = time.perf_counter() - started
        assert len(history.runs) == SESSIONS

        started = time.perf_counter()
        dialog = DashboardDialog(store)
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitExposed(dialog)
        drawn = time.perf_counter() - started
        assert dialog.count.text().startswith(f"{SESSIONS:,} runs")
        assert sum(dialog.measures["sub_calls"].histogram.bar_heights()) == SESSIONS

        started = time.perf_counter()
        dialog.filters.choose(status="completed")
        refiltered = time.perf_counter() - started
        dialog.close()
    finally:
        store.close()
    record_figure(
        "history",
        "1,000 sessions: spreads, breakdowns and tails computed",
        f"{computed * 1000:.0f} ms",
        "target < 1 s (review.history, Qt-free)",
    )
    record_figure(
        "history",
        "1,000 sessions: dashboard opened and drawn",
        f"{drawn * 1000:.0f} ms",
        f"target < 1 s; a filter change redraws in {refiltered * 1000:.0f} ms "
        f"(seeding the history took {seeded:.1f} s)",
    )
