"""Hand-built engine event sequences for tests and benchmarks that need no engine.

A root RLM call fans out plain LLM sub-calls from its one cell, plus one RLM child that runs a
sub-call of its own; call and request ids are unique across the whole test session.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from rlm_desktop.engine import events as ev
from tests import synthetic_events as se

ROOT_CODE = (
    'parts = context.split("\\n\\n")\n'
    'answers = llm_query_batched([f"Summarise: {p}" for p in parts])\n'
    "print(len(answers))"
)
_ids = itertools.count()


def _id(prefix: str) -> str:
    return f"{prefix}-{next(_ids)}"


def llm_call(run_id: str, parent_id: str, depth: int, ts: float, n: int) -> list[ev.Event]:
    """One finished LLM sub-call under `parent_id`."""
    call_id = _id("llm")
    return se.llm_call(
        run_id,
        call_id,
        parent_id,
        depth,
        ts,
        prompt=f"Summarise part {n}",
        response=f"summary {n}",
        request_id=_id("req"),
        reserved_tokens=500,
        input_tokens=100,
        output_tokens=10,
        cost_usd=0.001,
        latency_s=0.5,
    )


def rlm_call_start(
    run_id: str, parent_id: str | None, depth: int, ts: float, prompt: str = "What is this about?"
) -> tuple[str, list[ev.Event]]:
    """The opening events of an RLM call: started, first turn, the reply with code."""
    call_id = _id("rlm")
    return call_id, [
        se.call_started(run_id, call_id, parent_id, kind="rlm", depth=depth, prompt=prompt, ts=ts),
        ev.TurnStarted(run_id=run_id, ts=ts, call_id=call_id, index=0),
        *se.exchange(
            run_id,
            call_id,
            _id("req"),
            ts,
            content=f"Let me look.\n```repl\n{ROOT_CODE}\n```",
            messages=2,
            reserved_tokens=2000,
            input_tokens=1000,
            output_tokens=50,
            cost_usd=0.01,
            latency_s=1.0,
        ),
    ]


def rlm_call_end(
    run_id: str, call_id: str, ts: float, answer: str, stderr: str = "", error: str | None = None
) -> list[ev.Event]:
    """The closing events of an RLM call: its cell ran, it answered, it finished."""
    return [
        *se.turn_closed(
            run_id,
            call_id,
            0,
            ts,
            code=ROOT_CODE,
            stdout="3\n",
            stderr=stderr,
            error=error,
            reply="Let me look.",
            observation="3\n",
            cell_s=0.25,
            turn_s=1.5,
        ),
        *se.answered(
            run_id, call_id, ts, answer, input_tokens=1000, output_tokens=50, cost_usd=0.01
        ),
    ]


def synthetic_run(
    fanout: int = 3, *, run_id: str = "run-1", t0: float = 1_700_000_000.0, finish: bool = True
) -> Iterator[ev.Event]:
    """A whole run: root RLM call, `fanout` LLM sub-calls, one depth-2 RLM child with a child."""
    yield se.run_started(
        run_id,
        t0,
        query="What is this about?",
        mode="rlm",
        settings={"output_limit_chars": 20_000},
        documents=[{"name": "a.txt", "chars": 100, "tokens": 25}],
    )
    root, opening = rlm_call_start(run_id, None, 0, t0)
    yield from opening
    for n in range(fanout):
        yield from llm_call(run_id, root, 1, t0 + 1 + n * 0.001, n)
    child, child_open = rlm_call_start(run_id, root, 1, t0 + 2, prompt="Dig into part 0")
    yield from child_open
    yield from llm_call(run_id, child, 2, t0 + 3, 99)
    yield from rlm_call_end(run_id, child, t0 + 4, "child answer")
    if not finish:
        return
    yield from rlm_call_end(run_id, root, t0 + 5, "The answer is 42.")
    yield se.run_finished(
        run_id,
        t0 + 5,
        answer="The answer is 42.",
        cost_usd=0.02 + 0.001 * (fanout + 1),
        input_tokens=0,
        output_tokens=0,
        turns=2,
        sub_calls=fanout + 2,
        max_depth_reached=2,
        wall_s=5.0,
    )
