"""Engine benchmarks (`make bench`): fan-out, per-turn overhead, large contexts.

Figures are printed as a table; ratios are measured within one run so the machine's noise cancels.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ContextDocument, Run, RunConfig
from rlm_desktop.engine.events import CellExecuted, Event, TurnExecuted
from rlm_desktop.engine.sandbox.process import WorkerProcess
from tests.benchmarks.report import record_figure
from tests.scripted_server import ServerProcess, last_user_text, system_text

pytestmark = pytest.mark.bench
LATENCY_S = 0.2
FAN_OUT = 64


def _cells(events: list[Event]) -> list[CellExecuted]:
    return [e for e in events if isinstance(e, CellExecuted)]


async def _run(config: RunConfig, text: str) -> list[Event]:
    run = Run(config, [ContextDocument("doc.txt", text)], folders=paths.engine_folders())
    events: list[Event] = []
    run.bus.add_listener(events.append)
    result = await run.execute()
    assert result.status == "completed", result
    return events


def _fan_out_script(request: dict[str, Any]) -> str:
    user = last_user_text(request)
    if not system_text(request):
        return "sub-answer"
    if user.startswith("Question: piece"):
        return "```repl\nFINAL('child ' + context[:8])\n```"
    turn = sum(1 for m in request["messages"] if m["role"] == "assistant")
    script = [
        "```repl\none = llm_query('warm-up')\n```",
        "```repl\none = llm_query('single')\n```",
        f"```repl\nmany = llm_query_batched(['p%d' % i for i in range({FAN_OUT})])\n```",
        "```repl\nkid = rlm_query('piece single', context='x' * 100)\n```",
        f"```repl\nkids = rlm_query_batched(['piece %d' % i for i in range({FAN_OUT})],"
        f" ['c%d' % i * 50 for i in range({FAN_OUT})])\n```",
        "```repl\nFINAL(len(many) + len(kids))\n```",
    ]
    return script[turn]


async def test_fan_out_concurrency() -> None:
    server = ServerProcess(_fan_out_script, latency_s=LATENCY_S)
    try:
        config = RunConfig(
            query="fan out",
            model="openai/test-model",
            api_base=server.base_url,
            mode="rlm",
            budget=Budget(max_depth=2, concurrency=FAN_OUT),
        )
        events = await _run(config, "text " * 100)
    finally:
        server.stop()
    root_cells = [c for c in _cells(events) if c.call_id == "c1"]
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


def _overhead_script(request: dict[str, Any]) -> str:
    turn = sum(1 for m in request["messages"] if m["role"] == "assistant")
    if turn >= OVERHEAD_TURNS:
        return "```repl\nFINAL('done')\n```"
    return f"```repl\nx = {turn}\nx\n```"


async def test_turn_overhead() -> None:
    server = ServerProcess(_overhead_script)
    try:
        config = RunConfig(
            query="overhead",
            model="openai/test-model",
            api_base=server.base_url,
            mode="rlm",
            budget=Budget(max_turns=OVERHEAD_TURNS + 5),
        )
        events = await _run(config, "abc " * 1000)
    finally:
        server.stop()
    durations = [e.duration_s for e in events if isinstance(e, TurnExecuted)][2:]
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
