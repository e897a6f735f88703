"""Engine benchmarks (`make bench`): fan-out, per-turn overhead, large contexts.

Figures are printed as a table; ratios are measured within one run so the machine's noise cancels.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import resource
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ContextDocument, Credentials, Run, RunConfig, RunResult
from rlm_desktop.engine.config import SandboxChoice
from rlm_desktop.engine.events import CallStarted, CellExecuted, Event, TurnExecuted
from rlm_desktop.engine.sandbox.kernel.launcher import Launcher
from rlm_desktop.engine.sandbox.process import WorkerProcess
from rlm_desktop.store import Store
from tests.benchmarks.report import record_figure
from tests.scripted_rlm import Responder, scripted
from tests.scripted_server import ServerProcess

pytestmark = pytest.mark.bench
LATENCY_S = 0.2
FAN_OUT = 64


def _cells(events: list[Event]) -> list[CellExecuted]:
    return [e for e in events if isinstance(e, CellExecuted)]


async def _run(
    responder: Responder, text: str, budget: Budget, latency_s: float = 0.0
) -> tuple[RunResult, list[Event]]:
    """An RLM run over `text` against a scripted server in its own process; it must complete."""
    server = ServerProcess(responder, latency_s=latency_s)
    try:
        config = RunConfig(
            query="benchmark",
            model="openai/test-model",
            api_base=server.base_url,
            mode="rlm",
            budget=budget,
        )
        run = Run(config, [ContextDocument("doc.txt", text)], folders=paths.engine_folders())
        events: list[Event] = []
        run.bus.add_listener(events.append)
        result = await run.execute()
    finally:
        server.stop()
    assert result.status == "completed", result
    return result, events


CHILD_TURN = "```repl\nFINAL('child ' + context[:8])\n```"
CHILDREN = ["piece single", *(f"piece {i}" for i in range(FAN_OUT))]
FAN_OUT_TURNS = [
    "```repl\none = llm_query('warm-up')\n```",
    "```repl\none = llm_query('single')\n```",
    f"```repl\nmany = llm_query_batched(['p%d' % i for i in range({FAN_OUT})])\n```",
    "```repl\nkid = rlm_query('piece single', context='x' * 100)\n```",
    f"```repl\nkids = rlm_query_batched(['piece %d' % i for i in range({FAN_OUT})],"
    f" ['c%d' % i * 50 for i in range({FAN_OUT})])\n```",
    "```repl\nFINAL(len(many) + len(kids))\n```",
]


async def test_fan_out_concurrency() -> None:
    children = {prompt: [CHILD_TURN] for prompt in CHILDREN}
    result, events = await _run(
        scripted(children, root=FAN_OUT_TURNS),
        "text " * 100,
        Budget(max_depth=2, concurrency=FAN_OUT),
        latency_s=LATENCY_S,
    )
    assert result.answer == str(2 * FAN_OUT)
    started = [e.kind for e in events if isinstance(e, CallStarted)]
    assert (started.count("rlm"), started.count("llm")) == (1 + len(CHILDREN), 2 + FAN_OUT)
    root_cells = [c for c in _cells(events) if c.call_id == "c1"]
    assert len(root_cells) == len(FAN_OUT_TURNS)
    single, batch, kid, kids = (c.duration_s for c in root_cells[1:5])
    record_figure("engine", "llm_query single call (200 ms latency)", f"{single * 1000:.0f} ms", "")
    record_figure(
        "engine",
        f"llm_query_batched x{FAN_OUT} / one call",
        f"{batch / single:.2f}x",
        "target < 2.5x",
    )
    record_figure("engine", "rlm_query single child", f"{kid * 1000:.0f} ms", "")
    record_figure(
        "engine",
        f"rlm_query_batched x{FAN_OUT} / one call latency",
        f"{kids / single:.2f}x",
        "target < 4x",
    )


OVERHEAD_TURNS = 40
OVERHEAD_SCRIPT = [
    *(f"```repl\nx = {turn}\nx\n```" for turn in range(OVERHEAD_TURNS)),
    "```repl\nFINAL('done')\n```",
]


async def test_turn_overhead() -> None:
    result, events = await _run(
        scripted(root=OVERHEAD_SCRIPT), "abc " * 1000, Budget(max_turns=OVERHEAD_TURNS + 5)
    )
    assert (result.answer, result.turns) == ("done", OVERHEAD_TURNS + 1)
    durations = [e.duration_s for e in events if isinstance(e, TurnExecuted)][2:]
    assert len(durations) == OVERHEAD_TURNS - 1
    median = statistics.median(durations)
    record_figure(
        "engine",
        "turn overhead, zero latency (median)",
        f"{median * 1000:.1f} ms",
        "target < 15 ms; HTTP round trip through litellm and the worker cell included",
    )


async def test_large_context_reaches_repl(tmp_path: Path) -> None:
    size = 40 * 1024 * 1024
    line = "2026-11-29T10:00:00Z INFO request served in 12 ms from cache node-7\n"
    text = (line * (size // len(line) + 1))[:size]

    async def no_calls(op: str, args: dict[str, Any]) -> Any:
        raise AssertionError("no sub-calls expected")

    worker = WorkerProcess(
        text,
        [{"name": "big.log", "chars": size}],
        scratch_dir=tmp_path / "scratch",
        memory_limit_mb=None,
        output_cap_chars=10_000,
        handler=no_calls,
    )
    started = time.perf_counter()
    await worker.start()
    outcome = await worker.execute("print(len(context))", 30)
    elapsed = time.perf_counter() - started
    assert worker.pid is not None
    rss = psutil.Process(worker.pid).memory_info().rss
    await worker.close()
    assert outcome.stdout.strip() == str(size)
    record_figure("engine", "40 MB document into the REPL", f"{elapsed:.2f} s", "target < 1.5 s")
    record_figure(
        "engine",
        "worker RSS / document size",
        f"{rss / size:.2f}x",
        f"{rss / 2**20:.0f} MiB resident; target < 3x",
    )


async def test_worker_start_with_and_without_the_sandbox(tmp_path: Path) -> None:
    """Reported, not asserted: what confining the launcher and each worker costs."""

    async def no_calls(op: str, args: dict[str, Any]) -> Any:
        raise AssertionError("no sub-calls expected")

    for confined in (False, True):
        scratch = tmp_path / f"scratch-{confined}"
        launcher = Launcher(scratch, 10_000, sandbox=confined)
        started = time.perf_counter()
        report = await launcher.start()
        launcher_s = time.perf_counter() - started
        times = []
        for index in range(20):
            worker = WorkerProcess(
                "ctx",
                [],
                scratch_dir=scratch / f"call-{index}",
                memory_limit_mb=None,
                output_cap_chars=10_000,
                handler=no_calls,
                launcher=launcher,
            )
            started = time.perf_counter()
            await worker.start()
            times.append(time.perf_counter() - started)
            await worker.close()
        await launcher.close()
        record_figure(
            "engine",
            f"worker start, sandbox {report.level}",
            f"{statistics.median(times) * 1000:.1f} ms",
            f"median of 20 forks; launcher start {launcher_s * 1000:.0f} ms",
        )


SYSCALL_CELL = (
    "import os, time\n"
    "started = time.perf_counter()\n"
    "for _ in range(100_000):\n"
    "    os.stat('.')\n"
    "    os.getpid()\n"
    "print(time.perf_counter() - started)"
)


async def test_cells_in_the_sandbox(tmp_path: Path) -> None:
    """Reported, not asserted: a trivial cell's round trip and a system-call-heavy cell (200,000
    calls, each one through the seccomp filter) in a confined worker, against an unconfined one;
    run at two revisions to compare rule sets (docs/figures.md gives both)."""

    async def no_calls(op: str, args: dict[str, Any]) -> Any:
        raise AssertionError("no sub-calls expected")

    for confined in (False, True):
        launcher = Launcher(tmp_path / f"cells-{confined}", 10_000, sandbox=confined)
        report = await launcher.start()
        worker = WorkerProcess(
            "ctx",
            [],
            scratch_dir=tmp_path / f"cells-{confined}" / "call",
            memory_limit_mb=None,
            output_cap_chars=10_000,
            handler=no_calls,
            launcher=launcher,
        )
        await worker.start()
        trips = []
        for index in range(200):
            started = time.perf_counter()
            await worker.execute(f"x = {index}", 30)
            trips.append(time.perf_counter() - started)
        heavy = [float((await worker.execute(SYSCALL_CELL, 60)).stdout) for _ in range(5)]
        await worker.close()
        await launcher.close()
        record_figure(
            "engine",
            f"cell round trip, sandbox {report.level}",
            f"{statistics.median(trips) * 1000:.2f} ms",
            "median of 200 trivial cells",
        )
        record_figure(
            "engine",
            f"200,000 system calls in a cell, sandbox {report.level}",
            f"{statistics.median(heavy) * 1000:.0f} ms",
            "median of 5 (os.stat and os.getpid)",
        )


SUB_CALL_FAN_OUT = 1_000
LATENCY_FAN_OUT = 256
REPEATS = 3


@dataclass(frozen=True)
class _FanOut:
    """One recorded fan-out run: CPU of this process and of the server, wall, the batched cell."""

    cpu_s: float
    server_cpu_s: float
    wall_s: float
    cell_s: float


def _fan_out_script(calls: int) -> Responder:
    """Root turn 1 sends `calls` batched sub-calls, turn 2 answers; every sub-call answers "7"."""
    return scripted(
        root=[
            f"```repl\nr = llm_query_batched(['q %d' % i for i in range({calls})])\n```",
            "```repl\nFINAL(str(len(r)))\n```",
        ],
        sub="7",
    )


def _own_cpu_s() -> float:
    """CPU seconds of this process alone (the server and the workers are other processes)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _servers_cpu_s() -> float:
    """CPU seconds of the scripted servers (this process's `multiprocessing` children)."""
    total = 0.0
    for child in multiprocessing.active_children():
        if child.pid is not None:
            times = psutil.Process(child.pid).cpu_times()
            total += times.user + times.system
    return total


async def _recorded_fan_out(
    server: ServerProcess, store: Store | None, calls: int, sandbox: SandboxChoice = "auto"
) -> _FanOut:
    """One run of a `calls`-way fan-out, recorded in `store` (not recorded for None)."""
    config = RunConfig(
        sandbox=sandbox,
        query="benchmark",
        model="openai/test-model",
        api_base=server.base_url,
        mode="rlm",
        budget=Budget(max_turns=5, timeout_s=None, cell_timeout_s=900, concurrency=calls),
    )
    run = Run(
        config,
        [ContextDocument("doc.txt", "x" * 1000)],
        folders=paths.engine_folders(),
        credentials=Credentials(api_key="k"),
    )
    events: list[Event] = []
    run.bus.add_listener(events.append)
    recorder = store.record(run) if store is not None else None
    cpu, server_cpu, started = _own_cpu_s(), _servers_cpu_s(), time.perf_counter()
    result = await run.execute()
    if recorder is not None:
        recorder.close()
    wall = time.perf_counter() - started
    cpu, server_cpu = _own_cpu_s() - cpu, _servers_cpu_s() - server_cpu
    assert (result.status, result.answer, result.sub_calls) == ("completed", str(calls), calls)
    fan_out_cell = [c for c in _cells(events) if c.call_id == "c1"][0]
    return _FanOut(cpu, server_cpu, wall, fan_out_cell.duration_s)


def _spread(values: list[float], unit: str, digits: int = 2) -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{low:.{digits}f} / {mid:.{digits}f} / {high:.{digits}f} {unit}"


def fan_outs(
    calls: int, latency_s: float, sandbox: SandboxChoice = "auto", repeats: int = REPEATS
) -> list[_FanOut]:
    """A warm-up run, then `repeats` recorded runs of a `calls`-way fan-out."""
    store = Store(paths.database_path())
    warm_up = ServerProcess(_fan_out_script(10))
    try:  # imports, price map, first worker
        asyncio.run(_recorded_fan_out(warm_up, store, 10, sandbox))
    finally:
        warm_up.stop()
    server = ServerProcess(_fan_out_script(calls), latency_s=latency_s)
    try:
        return [
            asyncio.run(_recorded_fan_out(server, store, calls, sandbox)) for _ in range(repeats)
        ]
    finally:
        server.stop()
        store.close()


def test_cpu_per_sub_call() -> None:
    """Reported, not asserted: this process's CPU per sub-call over a 1,000-way fan-out (request,
    HTTP, parsing, ledger, events and the store; the server and the worker run elsewhere)."""
    runs = fan_outs(SUB_CALL_FAN_OUT, 0.0)
    per_call = [r.cpu_s / SUB_CALL_FAN_OUT * 1000 for r in runs]
    server = [r.server_cpu_s / SUB_CALL_FAN_OUT * 1000 for r in runs]
    record_figure(
        "engine",
        f"CPU per sub-call over a {SUB_CALL_FAN_OUT:,}-way fan-out (min / median / max)",
        _spread(per_call, "ms"),
        f"target ≤ 1 ms; our process only, the whole recorded run / {SUB_CALL_FAN_OUT:,}; "
        f"the scripted server's own CPU {_spread(server, 'ms')} per request",
    )


def test_what_recording_costs_a_fan_out_with_latency() -> None:
    """Reported, not asserted: the 256-way fan-out's batched cell with the store recording it and
    without, alternating (the store writes while the replies are awaited)."""
    store = Store(paths.database_path())
    warm_up = ServerProcess(_fan_out_script(10))
    try:
        asyncio.run(_recorded_fan_out(warm_up, store, 10))
    finally:
        warm_up.stop()
    server = ServerProcess(_fan_out_script(LATENCY_FAN_OUT), latency_s=LATENCY_S)
    extra: dict[bool, list[float]] = {True: [], False: []}
    try:
        asyncio.run(_recorded_fan_out(server, store, LATENCY_FAN_OUT))  # first of its size
        for _ in range(5):
            for recorded in (True, False):
                run = asyncio.run(
                    _recorded_fan_out(server, store if recorded else None, LATENCY_FAN_OUT)
                )
                extra[recorded].append(run.cell_s / LATENCY_S - 1)
    finally:
        server.stop()
        store.close()
    with_store, without = statistics.median(extra[True]), statistics.median(extra[False])
    record_figure(
        "store",
        f"{LATENCY_FAN_OUT}-way fan-out at {LATENCY_S * 1000:.0f} ms, batched cell recorded / not",
        f"{with_store:.2f} / {without:.2f} latencies",
        f"median of 5 each, alternating; recording's cost {with_store - without:+.2f} latencies",
    )


def test_fan_out_extra_latencies() -> None:
    """Reported, not asserted: how far a 256-way fan-out is from a perfectly concurrent one."""
    runs = fan_outs(LATENCY_FAN_OUT, LATENCY_S)
    whole = [r.wall_s / LATENCY_S - 3 for r in runs]  # ideal: turn 1, the batch, turn 2
    cell = [r.cell_s / LATENCY_S - 1 for r in runs]  # ideal: one latency
    record_figure(
        "engine",
        f"{LATENCY_FAN_OUT}-way fan-out: extra latencies, the batched cell alone",
        _spread(cell, "latencies"),
        f"target ≤ 0.5; {LATENCY_S * 1000:.0f} ms latency, min / median / max of {REPEATS}",
    )
    record_figure(
        "engine",
        f"{LATENCY_FAN_OUT}-way fan-out: extra latencies, the whole recorded run",
        _spread(whole, "latencies"),
        "ideal 3 latencies; includes the launcher and worker start and closing the store",
    )
