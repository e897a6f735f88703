"""What reporting the model's variables after every cell costs: the worker's own CPU time per
cell, and a cell's round trip with an empty REPL and with a full one."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.engine.sandbox.process import WorkerProcess
from rlm_desktop.engine.sandbox.worker.repl import Repl
from tests.benchmarks.report import record_figure
from tests.engine.scripting import DOCUMENT

pytestmark = pytest.mark.bench

CALLS = 2_000
CELLS = 300
TYPICAL = """
import re, json, collections
lines = context.splitlines()
chunks = [context[i:i + 2000] for i in range(0, len(context), 2000)]
counts = collections.Counter(w for line in lines for w in line.split())
total, found, ratio, label = 123, None, 0.25, 'ledger'
matches = [m.group(0) for m in re.finditer(r'amount \\d', context)]
by_name = {f'k{i}': i for i in range(5000)}
big = list(range(200_000))
def summarize(part):
    return part[:10]
answers = ['sub answer %d' % i for i in range(40)]
"""
FULL = TYPICAL + "globals().update({f'v{i:03}': 'x' * 5000 for i in range(150)})\n"


def _spread(samples: list[float], unit: float, digits: int = 0) -> str:
    return " / ".join(
        f"{value / unit:.{digits}f}"
        for value in (min(samples), statistics.median(samples), max(samples))
    )


@pytest.mark.parametrize(("name", "code"), [("typical", TYPICAL), ("150 variables", FULL)])
def test_worker_cpu_time_per_cell(name: str, code: str) -> None:
    """CPU time of `Repl.variables_shown`, the work the worker adds after each cell."""
    repl = Repl(None, DOCUMENT.text, [])  # type: ignore[arg-type]  # no sub-calls are made
    exec(code, repl.namespace)
    samples = []
    for _ in range(CALLS):
        started = time.process_time_ns()
        shown = repl.variables_shown()
        samples.append(time.process_time_ns() - started)
    assert shown
    record_figure(
        "cells",
        f"variables after a cell, worker CPU ({name})",
        f"{statistics.median(samples) / 1000:.0f} µs",
        f"min / median / max {_spread(samples, 1000)} µs over {CALLS:,} calls;"
        f" {len(shown)} names, {len(str(shown)):,} chars",
    )


async def _round_trips(tmp_path: Path, setup: str) -> list[float]:
    async def no_calls(op: str, args: dict[str, Any]) -> Any:
        raise AssertionError("no sub-calls expected")

    worker = WorkerProcess(
        DOCUMENT.text,
        [],
        scratch_dir=tmp_path / "scratch",
        memory_limit_mb=None,
        output_cap_chars=10_000,
        handler=no_calls,
    )
    await worker.start()
    try:
        if setup:
            await worker.execute(setup, 30)
        samples = []
        for _ in range(CELLS):
            started = time.perf_counter()
            await worker.execute("pass", 30)
            samples.append(time.perf_counter() - started)
        return samples
    finally:
        await worker.close()


async def test_cell_round_trip_with_an_empty_and_a_full_repl(tmp_path: Path) -> None:
    """Reported, not asserted (wall time on a shared machine): a `pass` cell's round trip."""
    empty = await _round_trips(tmp_path, "")
    full = await _round_trips(tmp_path, FULL)
    for name, samples in (("empty REPL", empty), ("150 variables", full)):
        record_figure(
            "cells",
            f"`pass` cell round trip ({name}), median",
            f"{statistics.median(samples) * 1000:.2f} ms",
            f"min / median / max {_spread(samples, 1e-3, 2)} ms over {CELLS} cells",
        )
