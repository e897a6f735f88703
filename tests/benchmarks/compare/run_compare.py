"""`make bench-compare`: the same scripted scenarios through RLM Desktop and the reference `rlms`.

Both talk to one scripted OpenAI-compatible server in a process of its own (every reply after
`LATENCY_S`), which counts the requests each side really sends. Ours runs through the real CLI
(`ours_driver.py`: the engine with a real store, in an isolated data folder), the reference through
its own package in its own environment (`reference_driver.py`). Wall times are each side's own
measure of the run, with both packages imported before the clock starts. Prints one table; `--json FILE` keeps the raw results.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.benchmarks.compare.scenarios import (
    DOCUMENT,
    LATENCY_S,
    PRICE_PER_MILLION,
    QUESTION,
    SCENARIOS,
    Scenario,
    responder,
)
from tests.cli import ROOT, isolated_env
from tests.scripted_server import ServerProcess

REFERENCE_PYTHON = ROOT / ".venv-reference" / "bin" / "python"
DRIVER = Path(__file__).with_name("reference_driver.py")
Result = dict[str, Any]


class CountingServer:
    """A `ServerProcess` for one scenario whose request count the parent can read and reset."""

    def __init__(self, scenario: Scenario) -> None:
        self.count = multiprocessing.get_context("fork").Value("i", 0)
        answer = responder(scenario)
        count = self.count

        def counted(request: dict[str, Any]) -> str:
            with count.get_lock():
                count.value += 1
            return answer(request)

        self.server = ServerProcess(counted, latency_s=LATENCY_S)

    def take(self) -> int:
        with self.count.get_lock():
            value, self.count.value = self.count.value, 0
        return int(value)


def _spec(scenario: Scenario) -> str:
    price = PRICE_PER_MILLION if scenario.max_cost_usd else 0.0
    return json.dumps(
        dataclasses.asdict(scenario) | {"document": DOCUMENT, "question": QUESTION, "price": price}
    )


def _last_json(done: subprocess.CompletedProcess[str]) -> Result | None:
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def run_ours(scenario: Scenario, base_url: str, folder: Path) -> Result:
    done = subprocess.run(
        [sys.executable, "-m", "tests.benchmarks.compare.ours_driver", _spec(scenario), base_url],
        cwd=ROOT,
        env=isolated_env(folder / "home"),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    result = _last_json(done)
    if result is None:
        return {"status": f"exit {done.returncode}", "error": done.stderr[-300:], "wall_s": None}
    return result


def run_reference(scenario: Scenario, base_url: str) -> Result:
    try:
        done = subprocess.run(
            [str(REFERENCE_PYTHON), str(DRIVER), _spec(scenario), base_url],
            capture_output=True,
            text=True,
            timeout=scenario.reference_kill_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"status": f"hung, killed after {scenario.reference_kill_s:.0f} s", "wall_s": None}
    result = _last_json(done)
    if result is None:
        return {"status": f"exit {done.returncode}", "error": done.stderr[-300:], "wall_s": None}
    tokens = result["input_tokens"] + result["output_tokens"]
    result["cost_usd"] = tokens * PRICE_PER_MILLION / 1e6 if scenario.max_cost_usd else 0.0
    return result


def repeated(
    server: CountingServer, run: Callable[..., Result], scenario: Scenario, *args: Any
) -> list[Result]:
    """`run(scenario, base_url, *args)` repeated; each result with the requests it sent."""
    results = []
    for _ in range(scenario.repeats):
        result = run(scenario, server.server.base_url, *args)
        result["requests"] = server.take()
        results.append(result)
    return results


def spread(results: list[Result], scale: float = 1.0, offset: float = 0.0) -> str:
    """min / median / max of the wall times, as `scale` units past `offset` ("—" when none)."""
    walls = [r["wall_s"] / scale - offset for r in results if r.get("wall_s") is not None]
    if not walls:
        return "—"
    if len(walls) == 1:
        return f"{walls[0]:.2f}"
    return f"{min(walls):.2f} / {statistics.median(walls):.2f} / {max(walls):.2f}"


def outcome(result: Result, scenario: Scenario) -> str:
    parts = [str(result["status"]), f"{result.get('requests', 0)} requests"]
    if scenario.max_cost_usd is not None and result.get("cost_usd") is not None:
        held = "held" if result["cost_usd"] <= scenario.max_cost_usd * 1.5 else "NOT held"
        parts.append(f"${result['cost_usd']:.3f} spent, cap {held}")
    answer = " ".join(str(result.get("answer") or "").split())[:40]
    if answer:
        parts.append(f"answer {answer!r}")
    return ", ".join(parts)


def table(rows: list[tuple[Scenario, list[Result], list[Result]]]) -> str:
    """The Markdown table: wall time (extra latencies where concurrency is measured), the ratio,
    and each side's outcome."""
    lines = [
        f"Scripted server latency {LATENCY_S * 1000:.0f} ms; wall time min / median / max over "
        'repeats; "extra" is in latencies past a perfectly concurrent run.',
        "",
        "| Scenario | RLM Desktop | reference rlms 0.1.3 | ratio | RLM Desktop outcome "
        "| reference outcome |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for scenario, ours, theirs in rows:
        if scenario.ideal_latencies is not None:
            ideal = scenario.ideal_latencies
            ours_time = f"+{spread(ours, LATENCY_S, ideal)} extra"
            theirs_time = f"+{spread(theirs, LATENCY_S, ideal)} extra"
        else:
            ours_time, theirs_time = f"{spread(ours)} s", f"{spread(theirs)} s"
        ours_walls = [r["wall_s"] for r in ours if r.get("wall_s")]
        theirs_walls = [r["wall_s"] for r in theirs if r.get("wall_s")]
        ratio = (
            f"{statistics.median(theirs_walls) / statistics.median(ours_walls):.1f}× faster"
            if ours_walls and theirs_walls
            else "—"
        )
        lines.append(
            f"| {scenario.title} | {ours_time} | {theirs_time} | {ratio} "
            f"| {outcome(ours[-1], scenario)} | {outcome(theirs[-1], scenario)} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append", help="run only these scenarios (names)")
    parser.add_argument("--json", help="write the raw results to this file")
    args = parser.parse_args()
    if not REFERENCE_PYTHON.exists():
        print(f"{REFERENCE_PYTHON} is missing: run `make bench-compare`", file=sys.stderr)
        return 2
    rows = []
    raw: dict[str, Any] = {}
    for scenario in SCENARIOS:
        if args.only and scenario.name not in args.only:
            continue
        server = CountingServer(scenario)
        try:
            with tempfile.TemporaryDirectory(prefix="bench-compare-") as folder:
                ours = repeated(server, run_ours, scenario, Path(folder))
                theirs = repeated(server, run_reference, scenario)
        finally:
            server.server.stop()
        rows.append((scenario, ours, theirs))
        raw[scenario.name] = {"ours": ours, "reference": theirs}
        print(f"{scenario.name}: done", file=sys.stderr, flush=True)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
