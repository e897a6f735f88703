"""Hand-built event sequences shaped like a real run, for store tests and benchmarks.

A root RLM call runs `turns` turns; each turn runs one cell that fans out `calls_per_turn`
plain LLM sub-calls, and every `child_every`-th sub-call is instead a recursive RLM child with one
turn and one cell of its own. Timestamps increase by a millisecond per event.
"""

from __future__ import annotations

from collections.abc import Iterator

from rlm_desktop.engine.events import BudgetUpdated, Event, ModeChosen, TurnStarted
from tests.synthetic_events import (
    FakeRun,
    answered,
    call_started,
    exchange,
    llm_call,
    restamp,
    run_finished,
    run_started,
    turn_closed,
)

__all__ = ["ANSWER", "CELL_WORD", "FakeRun", "run_events"]

CELL_WORD = "zebrafishcount"
ANSWER = "The answer is 42."
QUERY = "How many zebrafish are counted?"
ROOT = "c0"
UNSTAMPED = 0.0  # every event is restamped on the run's millisecond clock


def run_events(
    run_id: str,
    turns: int = 2,
    calls_per_turn: int = 3,
    child_every: int = 0,
    start: float = 1_700_000_000.0,
    finish: bool = True,
) -> Iterator[Event]:
    """The events of a synthetic run, in publication order."""
    return restamp(_events(run_id, turns, calls_per_turn, child_every, finish), start)


def _events(
    run_id: str, turns: int, calls_per_turn: int, child_every: int, finish: bool
) -> Iterator[Event]:
    yield run_started(
        run_id,
        query=QUERY,
        mode="auto",
        settings={
            "model": "openai/test-model",
            "api_base": "http://127.0.0.1:9/v1",
            "budget": {"max_depth": 2, "max_turns": 20, "max_cost_usd": None},
        },
        documents=[{"name": "notes.txt", "path": "/data/notes.txt", "chars": 23, "tokens": 3}],
    )
    yield ModeChosen(run_id=run_id, mode="rlm", reason="document is long")
    yield call_started(run_id, ROOT, None, kind="rlm", depth=0, prompt=QUERY)
    counter = 0
    for turn in range(turns):
        yield from _turn_opening(run_id, ROOT, turn, f"r{turn}")
        for _ in range(calls_per_turn):
            counter += 1
            call_id = f"c{counter}"
            if child_every and counter % child_every == 0:
                yield from _child(run_id, ROOT, call_id)
            else:
                yield from _llm_call(run_id, ROOT, call_id, depth=1)
            yield BudgetUpdated(
                run_id=run_id,
                cost_usd=0.001 * counter,
                tokens=30 * counter,
                sub_calls=counter,
                in_flight=0,
                unpriced_calls=0,
            )
        code = f"parts = llm_query_batched(chunks)\nprint('{CELL_WORD}', len(parts))"
        yield from turn_closed(
            run_id,
            ROOT,
            turn,
            UNSTAMPED,
            code=code,
            stdout=f"{CELL_WORD} {calls_per_turn}\n",
            reply=f"Turn {turn}: let me look.\n```repl\n{code}\n```",
            observation=f"{CELL_WORD} {calls_per_turn}",
            cell_s=0.5,
            turn_s=0.6,
        )
    if not finish:
        return
    yield from answered(
        run_id,
        ROOT,
        UNSTAMPED,
        ANSWER,
        input_tokens=100 * turns,
        output_tokens=20 * turns,
        cost_usd=0.01,
    )
    yield run_finished(
        run_id,
        answer=ANSWER,
        cost_usd=0.05,
        input_tokens=1000,
        output_tokens=200,
        turns=turns,
        sub_calls=counter,
        max_depth_reached=2 if child_every else 1,
        wall_s=3.0,
    )


def _turn_opening(run_id: str, call_id: str, turn: int, request_id: str) -> Iterator[Event]:
    yield TurnStarted(run_id=run_id, call_id=call_id, index=turn)
    yield from exchange(
        run_id,
        call_id,
        request_id,
        UNSTAMPED,
        content=f"```repl\nprint({turn})\n```",
        messages=2 + 2 * turn,
        reserved_tokens=5000,
        input_tokens=100,
        output_tokens=20,
        cost_usd=0.001,
        latency_s=0.2,
    )


def _llm_call(run_id: str, parent: str, call_id: str, depth: int) -> list[Event]:
    return llm_call(
        run_id,
        call_id,
        parent,
        depth,
        UNSTAMPED,
        prompt=f"Count zebrafish in {call_id}",
        response="7",
        request_id=f"q{call_id}",
        reserved_tokens=1000,
        input_tokens=20,
        output_tokens=1,
        cost_usd=0.0001,
        latency_s=0.05,
    )


def _child(run_id: str, parent: str, call_id: str) -> Iterator[Event]:
    yield call_started(
        run_id, call_id, parent, kind="rlm", depth=1, prompt=f"Summarise part {call_id}"
    )
    yield from _turn_opening(run_id, call_id, 0, f"r{call_id}")
    yield from _llm_call(run_id, call_id, f"{call_id}.1", depth=2)
    yield from turn_closed(
        run_id,
        call_id,
        0,
        UNSTAMPED,
        code="FINAL(llm_query('x'))",
        stdout="",
        reply="FINAL it",
        observation="",
        cell_s=0.1,
        turn_s=0.2,
    )
    yield from answered(
        run_id, call_id, UNSTAMPED, "7", input_tokens=120, output_tokens=21, cost_usd=0.0011
    )
