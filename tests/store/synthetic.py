"""Hand-built event sequences shaped like a real run, for store tests and benchmarks.

A root RLM call runs `turns` turns; each turn runs one cell that fans out `calls_per_turn`
plain LLM sub-calls, and every `child_every`-th sub-call is instead a recursive RLM child with one
turn and one cell of its own. Timestamps increase by a millisecond per event.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.events import (
    AnswerSubmitted,
    BudgetUpdated,
    CallFinished,
    CallStarted,
    CellExecuted,
    Event,
    LLMRequestSent,
    LLMResponded,
    ModeChosen,
    RunFinished,
    RunStarted,
    TurnExecuted,
    TurnStarted,
)

CELL_WORD = "zebrafishcount"
ANSWER = "The answer is 42."


@dataclass
class FakeRun:
    """What `Store.record` needs from a run: an id and a real event bus."""

    run_id: str
    bus: EventBus


class _Clock:
    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def run_events(
    run_id: str,
    turns: int = 2,
    calls_per_turn: int = 3,
    child_every: int = 0,
    start: float = 1_700_000_000.0,
    finish: bool = True,
) -> Iterator[Event]:
    """The events of a synthetic run, in publication order."""
    ts = _Clock(start)
    root = "c0"
    yield RunStarted(
        run_id=run_id,
        ts=ts(),
        query="How many zebrafish are counted?",
        mode="auto",
        model="openai/test-model",
        sub_model="openai/test-model",
        profile="default",
        settings={
            "model": "openai/test-model",
            "api_base": "http://127.0.0.1:9/v1",
            "budget": {"max_depth": 2, "max_turns": 20, "max_cost_usd": None},
        },
        documents=[{"name": "notes.txt", "path": "/data/notes.txt", "chars": 23, "tokens": 3}],
    )
    yield ModeChosen(run_id=run_id, ts=ts(), mode="rlm", reason="document is long")
    yield CallStarted(
        run_id=run_id,
        ts=ts(),
        call_id=root,
        parent_id=None,
        kind="rlm",
        depth=0,
        model="openai/test-model",
        prompt="How many zebrafish are counted?",
    )
    counter = 0
    for turn in range(turns):
        yield from _turn(run_id, ts, root, turn, f"r{turn}")
        for _ in range(calls_per_turn):
            counter += 1
            call_id = f"c{counter}"
            if child_every and counter % child_every == 0:
                yield from _child(run_id, ts, root, call_id)
            else:
                yield from _llm_call(run_id, ts, root, call_id, depth=1)
            yield BudgetUpdated(
                run_id=run_id,
                ts=ts(),
                cost_usd=0.001 * counter,
                tokens=30 * counter,
                sub_calls=counter,
                in_flight=0,
                unpriced_calls=0,
            )
        code = f"parts = llm_query_batched(chunks)\nprint('{CELL_WORD}', len(parts))"
        yield CellExecuted(
            run_id=run_id,
            ts=ts(),
            call_id=root,
            turn=turn,
            index=0,
            code=code,
            stdout=f"{CELL_WORD} {calls_per_turn}\n",
            stderr="",
            error=None,
            duration_s=0.5,
        )
        yield TurnExecuted(
            run_id=run_id,
            ts=ts(),
            call_id=root,
            index=turn,
            reply=f"Turn {turn}: let me look.\n```repl\n{code}\n```",
            code_blocks=1,
            observation=f"{CELL_WORD} {calls_per_turn}",
            duration_s=0.6,
        )
    if not finish:
        return
    yield AnswerSubmitted(run_id=run_id, ts=ts(), call_id=root, answer=ANSWER, source="FINAL")
    yield CallFinished(
        run_id=run_id,
        ts=ts(),
        call_id=root,
        status="ok",
        response=ANSWER,
        input_tokens=100 * turns,
        output_tokens=20 * turns,
        cost_usd=0.01,
    )
    yield RunFinished(
        run_id=run_id,
        ts=ts(),
        status="completed",
        answer=ANSWER,
        cost_usd=0.05,
        input_tokens=1000,
        output_tokens=200,
        turns=turns,
        sub_calls=counter,
        max_depth_reached=2 if child_every else 1,
        wall_s=3.0,
        unpriced=False,
    )


def _turn(run_id: str, ts: _Clock, call_id: str, turn: int, request_id: str) -> Iterator[Event]:
    yield TurnStarted(run_id=run_id, ts=ts(), call_id=call_id, index=turn)
    yield LLMRequestSent(
        run_id=run_id,
        ts=ts(),
        call_id=call_id,
        request_id=request_id,
        model="openai/test-model",
        messages=2 + 2 * turn,
        reserved_tokens=5000,
    )
    yield LLMResponded(
        run_id=run_id,
        ts=ts(),
        call_id=call_id,
        request_id=request_id,
        model="openai/test-model",
        content=f"```repl\nprint({turn})\n```",
        input_tokens=100,
        output_tokens=20,
        cost_usd=0.001,
        latency_s=0.2,
        finish_reason="stop",
        truncated=False,
        attempts=1,
    )


def _llm_call(run_id: str, ts: _Clock, parent: str, call_id: str, depth: int) -> Iterator[Event]:
    yield CallStarted(
        run_id=run_id,
        ts=ts(),
        call_id=call_id,
        parent_id=parent,
        kind="llm",
        depth=depth,
        model="openai/test-model",
        prompt=f"Count zebrafish in {call_id}",
    )
    yield LLMRequestSent(
        run_id=run_id,
        ts=ts(),
        call_id=call_id,
        request_id=f"q{call_id}",
        model="openai/test-model",
        messages=1,
        reserved_tokens=1000,
    )
    yield LLMResponded(
        run_id=run_id,
        ts=ts(),
        call_id=call_id,
        request_id=f"q{call_id}",
        model="openai/test-model",
        content="7",
        input_tokens=20,
        output_tokens=1,
        cost_usd=0.0001,
        latency_s=0.05,
        finish_reason="stop",
        truncated=False,
        attempts=1,
    )
    yield CallFinished(
        run_id=run_id,
        ts=ts(),
        call_id=call_id,
        status="ok",
        response="7",
        input_tokens=20,
        output_tokens=1,
        cost_usd=0.0001,
    )


def _child(run_id: str, ts: _Clock, parent: str, call_id: str) -> Iterator[Event]:
    yield CallStarted(
        run_id=run_id,
        ts=ts(),
        call_id=call_id,
        parent_id=parent,
        kind="rlm",
        depth=1,
        model="openai/test-model",
        prompt=f"Summarise part {call_id}",
    )
    yield from _turn(run_id, ts, call_id, 0, f"r{call_id}")
    grandchild = f"{call_id}.1"
    yield from _llm_call(run_id, ts, call_id, grandchild, depth=2)
    yield CellExecuted(
        run_id=run_id,
        ts=ts(),
        call_id=call_id,
        turn=0,
        index=0,
        code="FINAL(llm_query('x'))",
        stdout="",
        stderr="",
        error=None,
        duration_s=0.1,
    )
    yield TurnExecuted(
        run_id=run_id,
        ts=ts(),
        call_id=call_id,
        index=0,
        reply="FINAL it",
        code_blocks=1,
        observation="",
        duration_s=0.2,
    )
    yield AnswerSubmitted(run_id=run_id, ts=ts(), call_id=call_id, answer="7", source="FINAL")
    yield CallFinished(
        run_id=run_id,
        ts=ts(),
        call_id=call_id,
        status="ok",
        response="7",
        input_tokens=120,
        output_tokens=21,
        cost_usd=0.0011,
    )
