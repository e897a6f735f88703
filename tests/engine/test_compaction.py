"""History compaction on a scripted 40-turn run: when it triggers, what it keeps, what it saves."""

from __future__ import annotations

from typing import Any

import pytest

from rlm_desktop.engine import Budget
from rlm_desktop.engine.compaction import COMPACTED_NOTE, SUMMARY_REQUEST
from rlm_desktop.engine.events import CellExecuted, HistoryCompacted, LLMResponded, RunFinished
from rlm_desktop.review.call_tree import CallTree
from tests.engine.long_run import LongRun
from tests.engine.scripting import QUERY, make_run, of_type, run_to_end
from tests.scripted_server import ScriptedServer

TURNS = 40
THRESHOLD = 8_000


def turn_inputs(events: list[Any], call_id: str) -> list[int]:
    """The input tokens of each turn request of `call_id`, summary requests left out."""
    return [
        e.input_tokens
        for e in of_type(events, LLMResponded)
        if e.call_id == call_id and not e.content.startswith("Summary:")
    ]


async def test_a_long_run_is_compacted_at_the_threshold_and_keeps_its_history(
    scripted_server: ScriptedServer,
) -> None:
    script = LongRun(TURNS)
    scripted_server.respond_with(script)
    run = make_run(scripted_server, budget=Budget(max_turns=TURNS), compact_tokens=THRESHOLD)
    result, events = await run_to_end(run)

    assert (result.status, result.answer) == ("completed", f"steps: {TURNS}")
    compactions = of_type(events, HistoryCompacted)
    assert len(compactions) >= 2
    assert script.summaries == len(compactions)
    for compaction in compactions:
        assert compaction.tokens_before >= THRESHOLD
        assert compaction.tokens_after < compaction.tokens_before
        assert compaction.summary.startswith("Summary: steps 0 to")

    root = compactions[0].call_id
    inputs = turn_inputs(events, root)
    assert len(inputs) == TURNS
    for compaction in compactions:
        turn = compaction.turn
        assert inputs[turn] < inputs[turn - 1], (turn, inputs[turn - 1], inputs[turn])

    first_after = script.turn_requests[compactions[0].turn]["messages"]
    assert first_after[0]["role"] == "system"
    assert first_after[1]["content"].startswith(f"Question: {QUERY}")
    assert first_after[2] == {"role": "assistant", "content": compactions[0].summary}
    assert first_after[3]["content"] == COMPACTED_NOTE.format(
        count=1, turns=compactions[0].turn - 2
    )
    assert SUMMARY_REQUEST not in str(first_after)

    last_cell = of_type(events, CellExecuted)[-1]
    assert "searchable True" in last_cell.stdout
    history_length = int(last_cell.stdout.split("searchable True ")[1].split()[0])
    assert history_length >= 2 + 2 * (TURNS - 1)
    finished = of_type(events, RunFinished)[0]
    assert finished.turns == TURNS

    tree = CallTree()
    tree.apply(events)
    assert tree.root is not None
    assert tree.root.compactions == len(compactions)
    marked = [turn.index for turn in tree.root.turns if turn.compacted is not None]
    assert marked == [c.turn for c in compactions]
    first = compactions[0]
    assert tree.root.turns[first.turn].compacted == (first.tokens_before, first.tokens_after)


async def test_the_window_share_alone_triggers_compaction(scripted_server: ScriptedServer) -> None:
    script = LongRun(20)
    scripted_server.respond_with(script)
    # The scripted model's window is the default 128,000 tokens: 6% of it is 7,680.
    run = make_run(
        scripted_server,
        budget=Budget(max_turns=20),
        compact_tokens=None,
        compact_window_share=0.06,
    )
    result, events = await run_to_end(run)
    assert result.status == "completed"
    compactions = of_type(events, HistoryCompacted)
    assert compactions
    assert all(c.tokens_before >= 7_680 for c in compactions)


async def test_below_the_threshold_nothing_is_compacted(scripted_server: ScriptedServer) -> None:
    script = LongRun(8)
    scripted_server.respond_with(script)
    run = make_run(scripted_server, budget=Budget(max_turns=8))
    result, events = await run_to_end(run)
    assert result.status == "completed"
    assert not of_type(events, HistoryCompacted)
    assert script.summaries == 0
    inputs = turn_inputs(events, of_type(events, LLMResponded)[0].call_id)
    assert inputs == sorted(inputs)


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        ({"compact_tokens": 500}, "compact_tokens must be at least 1,000"),
        ({"compact_window_share": 0.0}, "compact_window_share must be between"),
        ({"compact_window_share": 1.5}, "compact_window_share must be between"),
    ],
)
def test_compaction_settings_that_make_no_sense_are_refused(
    scripted_server: ScriptedServer, settings: dict[str, Any], problem: str
) -> None:
    from rlm_desktop.engine import ConfigError

    with pytest.raises(ConfigError, match=problem):
        make_run(scripted_server, **settings)
