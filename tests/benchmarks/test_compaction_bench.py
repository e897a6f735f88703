"""The root's input tokens per turn over a 40-turn scripted run, with and without compaction."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import LLMResponded
from tests.benchmarks.report import record_figure
from tests.engine.long_run import LongRun
from tests.engine.scripting import make_run, of_type, run_to_end
from tests.scripted_server import ScriptedServer

pytestmark = pytest.mark.bench

TURNS = 40
COMPACT_TOKENS = 8_000


@dataclass(frozen=True)
class Spent:
    """The root's input tokens: per turn request, per summary request, and the run's total."""

    turns: list[int]
    summaries: list[int]
    total: int


async def _spent(server: ScriptedServer, compact_tokens: int | None) -> Spent:
    server.respond_with(LongRun(TURNS))
    run = make_run(server, budget=Budget(max_turns=TURNS), compact_tokens=compact_tokens)
    result, events = await run_to_end(run)
    assert result.status == "completed"
    responded = of_type(events, LLMResponded)
    root = [e for e in responded if e.call_id == responded[0].call_id]
    summaries = [e.input_tokens for e in root if e.content.startswith("Summary:")]
    turns = [e.input_tokens for e in root if not e.content.startswith("Summary:")]
    assert len(turns) == TURNS
    return Spent(turns, summaries, result.input_tokens)


async def test_root_input_tokens_per_turn(scripted_server: ScriptedServer) -> None:
    """Reported, not asserted beyond the shape: the per-turn cost with and without compaction."""
    flat = await _spent(scripted_server, None)
    compacted = await _spent(scripted_server, COMPACT_TOKENS)
    print("\nroot input tokens per turn (scripted server's count)\nturn  without  with")
    for index, (left, right) in enumerate(zip(flat.turns, compacted.turns, strict=True)):
        print(f"{index + 1:>4}  {left:>7,}  {right:>6,}")
    print(f"summary requests: {compacted.summaries}")
    record_figure(
        "compaction",
        "root input tokens at turn 40, 40-turn run (off / at 8k)",
        f"{flat.turns[-1]:,} / {compacted.turns[-1]:,}",
        f"largest turn {max(flat.turns):,} / {max(compacted.turns):,}",
    )
    record_figure(
        "compaction",
        "input tokens of the whole 40-turn run (off / at 8k)",
        f"{flat.total:,} / {compacted.total:,}",
        f"{len(compacted.summaries)} summary requests ({sum(compacted.summaries):,} tokens) "
        "included",
    )
    assert compacted.summaries
    assert max(compacted.turns) < max(flat.turns)
