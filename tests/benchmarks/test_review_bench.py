"""Review benchmarks: the timeline of a 10,000-call session drawn, and a 1,000-call session
replayed at 16x while a probe measures the event loop's stalls. Run by `make bench`."""

from __future__ import annotations

import random
import time

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.engine import events as ev
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.review.replay import SPEEDS
from rlm_desktop.store import Store
from rlm_desktop.ui.window.main_window import MainWindow
from tests import synthetic_events as se
from tests.benchmarks.report import record_figure
from tests.benchmarks.test_ui_bench import StallProbe

pytestmark = pytest.mark.bench
CODE = 'answers = llm_query_batched([f"Summarise {p}" for p in parts])\nprint(len(answers))'


def sub_call(
    run_id: str, call_id: str, parent: str, depth: int, ts: float, latency: float
) -> list[ev.Event]:
    """One LLM sub-call's events."""
    return se.llm_call(
        run_id,
        call_id,
        parent,
        depth,
        ts,
        prompt=f"Summarise chunk {call_id}",
        response=f"Chunk {call_id} has no incident.",
        request_id=f"q-{call_id}",
        reserved_tokens=6000,
        input_tokens=4000,
        output_tokens=40,
        cost_usd=0.0011,
        latency_s=latency,
    )


def rlm_turn(
    run_id: str, call_id: str, turn: int, ts: float, subs: list[ev.Event], end: float
) -> list[ev.Event]:
    """One turn of an RLM call whose cell ran `subs` from `ts` to `end`."""
    return [
        ev.TurnStarted(run_id=run_id, ts=ts, call_id=call_id, index=turn),
        *se.exchange(
            run_id,
            call_id,
            f"q-{call_id}-{turn}",
            ts,
            content=f"Next batch.\n```repl\n{CODE}\n```",
            messages=2 + 2 * turn,
            reserved_tokens=9000,
            input_tokens=3000,
            output_tokens=60,
            cost_usd=0.002,
            latency_s=0.5,
        ),
        *subs,
        *se.turn_closed(
            run_id,
            call_id,
            turn,
            end,
            code=CODE,
            stdout=f"{len(subs) // 4}\n",
            reply="Next batch.",
            observation="100",
            cell_s=end - ts - 0.5,
            turn_s=end - ts,
        ),
    ]


def finished(run_id: str, call_id: str, ts: float) -> list[ev.Event]:
    """An RLM call answered and finished."""
    return se.answered(
        run_id, call_id, ts, "No incidents.", input_tokens=1, output_tokens=1, cost_usd=0.0
    )


def run_end(run_id: str, events: list[ev.Event]) -> ev.RunFinished:
    """The run's end, just after its last event, with its totals."""
    calls = [e for e in events if isinstance(e, ev.CallStarted)]
    replies = [e for e in events if isinstance(e, ev.LLMResponded)]
    last = max(e.ts for e in events)
    return se.run_finished(
        run_id,
        last + 0.01,
        answer="No incidents.",
        cost_usd=sum(e.cost_usd or 0.0 for e in replies),
        input_tokens=sum(e.input_tokens for e in replies),
        output_tokens=sum(e.output_tokens for e in replies),
        turns=sum(isinstance(e, ev.TurnExecuted) for e in events),
        sub_calls=len(calls) - 1,
        max_depth_reached=max(e.depth for e in calls),
        wall_s=last + 0.01 - events[0].ts,
    )


def batched_session(run_id: str, turns: int, per_turn: int, t0: float) -> list[ev.Event]:
    """A root that runs `turns` turns, each a concurrent batch of `per_turn` LLM sub-calls that
    come back over one to three seconds."""
    rng = random.Random(11)
    events: list[ev.Event] = [
        se.run_started(
            run_id, t0, query="Which incidents happened?", mode="rlm", settings={}, documents=[]
        ),
        se.call_started(run_id, "root", None, kind="rlm", prompt="Which incidents?", ts=t0),
    ]
    ts = t0
    for turn in range(turns):
        subs: list[ev.Event] = []
        for n in range(per_turn):
            subs += sub_call(
                run_id, f"c{turn}-{n}", "root", 2, ts + 0.5 + n * 0.002, rng.uniform(1, 3)
            )
        end = max(e.ts for e in subs) + 0.05
        events += rlm_turn(run_id, "root", turn, ts, subs, end)
        ts = end + 0.1
    events = in_time_order([*events, *finished(run_id, "root", ts)])
    return [*events, run_end(run_id, events)]


def nested_session(run_id: str, children: int, per_child: int, t0: float) -> list[ev.Event]:
    """A root fanning out `children` RLM calls at once, each asking `per_child` sub-LLMs in
    sequential rounds of ten."""
    rng = random.Random(5)
    events: list[ev.Event] = [
        se.run_started(
            run_id, t0, query="Which incidents happened?", mode="rlm", settings={}, documents=[]
        ),
        se.call_started(run_id, "root", None, kind="rlm", prompt="Which incidents?", ts=t0),
    ]
    ends = []
    for child in range(children):
        call_id, start = f"r{child}", t0 + 1 + child * 0.05
        events.append(
            se.call_started(run_id, call_id, "root", kind="rlm", depth=2, prompt="Part", ts=start)
        )
        subs: list[ev.Event] = []
        ts = start + 0.5
        for batch in range(0, per_child, 10):
            latencies = [rng.uniform(0.5, 1.5) for _ in range(min(10, per_child - batch))]
            for n, latency in enumerate(latencies):
                subs += sub_call(run_id, f"{call_id}-{batch + n}", call_id, 3, ts, latency)
            ts += max(latencies) + 0.01
        events += rlm_turn(run_id, call_id, 0, start, subs, ts)
        events += finished(run_id, call_id, ts + 0.01)
        ends.append(ts + 0.01)
    events = in_time_order([*events, *finished(run_id, "root", max(ends) + 0.5)])
    return [*events, run_end(run_id, events)]


def in_time_order(events: list[ev.Event]) -> list[ev.Event]:
    """The events as a run publishes them: in the order they happened."""
    return sorted(events, key=lambda e: e.ts)


def saved(run_id: str, events: list[ev.Event]) -> str:
    """Write `events` to the store through its real recorder; returns the session id."""
    run = se.FakeRun(run_id, EventBus())
    store = Store(paths.database_path())
    recorder = store.record(run)
    for event in events:
        run.bus.publish(event)
    recorder.close()
    store.close()
    return run_id


@pytest.fixture
def bench_window(window: MainWindow) -> MainWindow:
    """The main window at a typical desktop size, on the workspace."""
    window.resize(1440, 900)
    window.pages.setCurrentWidget(window.workspace)
    return window


def test_timeline_of_10000_calls_draws_quickly(bench_window: MainWindow, qtbot: QtBot) -> None:
    window = bench_window
    ws = window.workspace
    session_id = saved("bench-timeline", nested_session("bench-timeline", 99, 100, time.time()))
    assert window.open_session(session_id)
    assert len(ws.model.tree) == 10_000

    started = time.perf_counter()
    import rlm_desktop.ui.timeline.view  # noqa: F401  (pyqtgraph, imported on first showing)

    imported = time.perf_counter() - started
    started = time.perf_counter()
    window.timeline_action.trigger()
    view = ws.timeline.view
    assert view is not None
    QApplication.processEvents()
    view.plot.viewport().repaint()
    first = time.perf_counter() - started
    assert len(view.timeline.bars) == 10_000

    started = time.perf_counter()
    ws.timeline.refresh()
    view.plot.viewport().repaint()
    drawn = time.perf_counter() - started
    bars = sum(len(item.opts["x0"]) for item in view.items.values())
    cells = sum(len(item.opts["x0"]) for item in view.cell_items.values())
    assert bars == 10_000
    record_figure(
        "review",
        "timeline of 10,000 calls: laid out and drawn",
        f"{drawn:.2f} s",
        f"target < 1 s; {len(view.items) + len(view.cell_items)} plot items for {bars:,} bars "
        f"and {cells:,} cells; first showing {first:.2f} s (plot made), "
        f"after importing pyqtgraph once in {imported:.2f} s",
    )


@pytest.mark.parametrize("timeline", [False, True], ids=["tree", "tree+timeline"])
def test_replay_at_16x_of_1000_calls_keeps_the_loop_responsive(
    bench_window: MainWindow, qtbot: QtBot, timeline: bool
) -> None:
    window = bench_window
    ws = window.workspace
    events = batched_session("bench-replay", 10, 100, time.time())
    session_id = saved("bench-replay", events)
    assert window.open_session(session_id)
    if timeline:
        window.timeline_action.trigger()
    ws.replay.bar.speed.setCurrentIndex(SPEEDS.index(SPEEDS[4]))
    ws.replay.play()
    probe = StallProbe()
    probe.start()
    started = time.perf_counter()
    qtbot.waitUntil(lambda: not ws.replay.playing, timeout=120_000)
    elapsed = time.perf_counter() - started
    probe.stop()
    assert ws.replay.player is not None
    assert ws.replay.player.at_end
    assert ws.model.tree.sub_calls_done == 1000
    assert ws.answer.isVisible()
    duration = ws.replay.player.duration
    record_figure(
        "review",
        f"replay at 16x of 1,000 calls ({'with' if timeline else 'without'} the timeline): "
        "worst loop stall",
        f"{probe.worst():.1f} ms",
        f"target < 50 ms; p99 {probe.p99():.1f} ms over {len(probe.gaps)} ticks; "
        f"{len(events):,} events, {duration:.1f} s of run played in {elapsed:.1f} s",
    )
