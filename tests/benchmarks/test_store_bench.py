"""Store benchmarks: what recording costs a run, and how fast a big saved run opens for review.

Run with `make bench` (or `pytest tests/benchmarks/test_store_bench.py -m bench -s`).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ContextDocument, Credentials, Run, RunConfig
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.events import Event
from rlm_desktop.exports import export
from rlm_desktop.store import Recorder, Store
from tests.benchmarks.report import record_figure
from tests.scripted_rlm import Responder, scripted
from tests.scripted_server import ServerProcess
from tests.store.synthetic import FakeRun, run_events

CALLS = 10_000
TURNS = 10
YIELD_EVERY = 20
SITTINGS = 3


def _events(run_id: str) -> list[Event]:
    return list(run_events(run_id, turns=TURNS, calls_per_turn=CALLS // TURNS, child_every=50))


async def _publish(bus: EventBus, events: list[Event]) -> float:
    """Publish like an engine does: in order, yielding to the loop now and then."""
    start = time.perf_counter()
    for n, event in enumerate(events):
        bus.publish(event)
        if n % YIELD_EVERY == 0:
            await asyncio.sleep(0)
    return time.perf_counter() - start


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _table(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    print(f"\n{title}")
    for name, value in rows:
        print(f"  {name:<{width}}  {value:>14}")


@pytest.mark.bench
def test_recording_a_10000_call_run(tmp_path: Path) -> None:
    events = _events("bench-run")
    calls = sum(1 for e in events if type(e).__name__ == "CallStarted")
    baseline = asyncio.run(_publish(EventBus(), events))

    store = Store(tmp_path / "bench.db")
    run = FakeRun("bench-run", EventBus())
    recorder = store.record(run)
    listener_and_flushes = asyncio.run(_publish(run.bus, events))
    final_flush = _timed(recorder.close)
    recorded = listener_and_flushes + final_flush
    overhead = recorded - baseline
    _table(
        f"Recording a synthetic run of {calls:,} calls ({len(events):,} events)",
        [
            ("publish, no recorder", f"{baseline:.3f} s"),
            ("publish, recorder attached", f"{recorded:.3f} s"),
            ("recording cost", f"{overhead:.3f} s"),
            ("recording cost per call", f"{overhead / calls * 1e6:.0f} µs"),
            ("recording cost per event", f"{overhead / len(events) * 1e6:.1f} µs"),
            ("database size", f"{(tmp_path / 'bench.db').stat().st_size / 1e6:.1f} MB"),
        ],
    )

    opened: dict[str, object] = {}
    open_s = _timed(lambda: opened.setdefault("store", Store(tmp_path / "bench.db")))
    review = opened["store"]
    assert isinstance(review, Store)
    shown: dict[str, object] = {}
    session_s = _timed(lambda: shown.setdefault("s", review.session("bench-run")))
    replay_s = _timed(lambda: sum(1 for _ in review.replay("bench-run")))
    exports = {
        fmt: _timed(lambda fmt=fmt: export(review, "bench-run", fmt))
        for fmt in ("jsonl", "md", "otlp")
    }
    search_s = _timed(lambda: review.search("zebrafishcount"))
    _table(
        f"Reviewing the saved {calls:,}-call run",
        [
            ("open the store", f"{open_s * 1000:.0f} ms"),
            ("tree and turns (session)", f"{session_s * 1000:.0f} ms"),
            ("open + tree and turns", f"{(open_s + session_s) * 1000:.0f} ms"),
            ("replay every event", f"{replay_s * 1000:.0f} ms"),
            *((f"export {fmt}", f"{s * 1000:.0f} ms") for fmt, s in exports.items()),
            ("search a word", f"{search_s * 1000:.0f} ms"),
        ],
    )
    result = shown["s"]
    assert isinstance(result, dict)
    assert len(result["calls"]) == calls
    review.close()
    store.close()
    record_figure(
        "store",
        f"open a {calls:,}-call session (tree and turns)",
        f"{(open_s + session_s) * 1000:.0f} ms",
        "target < 1 s",
    )


def _fan_out(calls: int) -> Responder:
    """Root turn 1 makes `calls` batched sub-calls; turn 2 submits; sub-calls answer "7"."""
    return scripted(
        root=[
            f"```repl\nr = llm_query_batched(['q %d' % i for i in range({calls})])\n```",
            "```repl\nFINAL(str(len(r)))\n```",
        ],
        sub="7",
    )


async def _real_run(
    server: ServerProcess, store: Store | None, calls: int
) -> tuple[float, int, Recorder | None, float, float]:
    """The run's wall time, its sub-calls, its recorder, the CPU of the store's writing process
    on it and this process's own CPU (every thread's)."""
    config = RunConfig(
        query="bench", model="openai/test-model", api_base=server.base_url, mode="rlm",
        budget=Budget(max_turns=5, timeout_s=None, cell_timeout_s=900),
    )  # fmt: skip
    run = Run(
        config,
        [ContextDocument(name="d", text="x" * 1000)],
        folders=paths.engine_folders(),
        credentials=Credentials(api_key="k"),
    )
    recorder = store.record(run) if store is not None else None
    process_cpu = store.writing.process.cpu_seconds if store is not None else 0.0
    own_cpu = time.process_time()
    start = time.perf_counter()
    result = await run.execute()
    if recorder is not None:
        recorder.close()
    wall = time.perf_counter() - start
    own_cpu = time.process_time() - own_cpu
    if store is not None:
        process_cpu = store.writing.process.cpu_seconds - process_cpu
    assert (result.status, result.answer, result.sub_calls) == ("completed", str(calls), calls)
    return wall, result.sub_calls, recorder, process_cpu, own_cpu


@pytest.mark.bench
def test_recording_a_real_10000_call_run() -> None:
    """The engine against the scripted server (its own process) at zero latency, with and
    without the store."""
    store = Store(paths.database_path())
    warm_up = ServerProcess(_fan_out(10))
    asyncio.run(_real_run(warm_up, None, 10))  # warm-up: imports, price map, first worker
    warm_up.stop()
    server = ServerProcess(_fan_out(CALLS))
    # Alternate, each pair in turn order, and take the median of each: a busy machine's load
    # comes and goes across a sitting.
    order = [(None, store), (store, None)] * (SITTINGS // 2) + [(None, store)] * (SITTINGS % 2)
    try:
        runs = [asyncio.run(_real_run(server, s, CALLS)) for pair in order for s in pair]
    finally:
        server.stop()
        store.close()
    bare = statistics.median(run[0] for run in runs if run[2] is None)
    bare_cpu = statistics.median(run[4] for run in runs if run[2] is None)
    recorded_runs = sorted((r for r in runs if r[2] is not None), key=lambda r: r[0])
    recorded, calls, recorder, process_cpu, own_cpu = recorded_runs[len(recorded_runs) // 2]
    assert recorder is not None
    assert recorder.events_written >= 3 * calls  # each sub-call: started, responded, finished
    share = recorder.write_seconds / recorded
    _table(
        f"A real run of {calls:,} sub-calls against the scripted server (zero latency)",
        [
            (f"wall, no recorder (median of {SITTINGS})", f"{bare:.2f} s"),
            (f"wall, recorder attached (median of {SITTINGS})", f"{recorded:.2f} s"),
            ("difference (medians)", f"{(recorded - bare) / bare * 100:+.1f} %"),
            ("events written", f"{recorder.events_written:,}"),
            ("flushes (transactions)", f"{recorder.flushes:,}"),
            ("the run's loop on recording", f"{recorder.write_seconds:.3f} s"),
            ("the writing thread's time", f"{recorder.thread_seconds:.3f} s"),
            ("the writing thread's CPU", f"{recorder.thread_cpu_seconds:.3f} s"),
            ("the writing process's CPU", f"{process_cpu:.3f} s"),
            ("the app's CPU, recorded / not (median)", f"{own_cpu:.2f} / {bare_cpu:.2f} s"),
            ("writing / wall time", f"{share * 100:.2f} %"),
        ],
    )
    record_figure(
        "store",
        f"writing {recorder.events_written:,} events of {calls:,} sub-calls: share of wall",
        f"{share * 100:.1f}%",
        f"target < 5%; wall with vs without recorder {(recorded - bare) / bare * 100:+.1f}%",
    )
