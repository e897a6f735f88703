"""Hand-built engine event sequences for tests and benchmarks that need no engine."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from rlm_desktop.engine import events as ev

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
    request = _id("req")
    return [
        ev.CallStarted(
            run_id=run_id,
            ts=ts,
            call_id=call_id,
            parent_id=parent_id,
            kind="llm",
            depth=depth,
            model="openai/test-model",
            prompt=f"Summarise part {n}",
        ),
        ev.LLMRequestSent(
            run_id=run_id,
            ts=ts,
            call_id=call_id,
            request_id=request,
            model="openai/test-model",
            messages=1,
            reserved_tokens=500,
        ),
        ev.LLMResponded(
            run_id=run_id,
            ts=ts + 0.5,
            call_id=call_id,
            request_id=request,
            model="openai/test-model",
            content=f"summary {n}",
            input_tokens=100,
            output_tokens=10,
            cost_usd=0.001,
            latency_s=0.5,
            finish_reason="stop",
            truncated=False,
            attempts=1,
        ),
        ev.CallFinished(
            run_id=run_id,
            ts=ts + 0.5,
            call_id=call_id,
            status="ok",
            response=f"summary {n}",
            input_tokens=100,
            output_tokens=10,
            cost_usd=0.001,
        ),
    ]


def rlm_call_start(
    run_id: str, parent_id: str | None, depth: int, ts: float, prompt: str = "What is this about?"
) -> tuple[str, list[ev.Event]]:
    """The opening events of an RLM call: started, first turn, the reply with code."""
    call_id = _id("rlm")
    request = _id("req")
    reply = f"Let me look.\n```repl\n{ROOT_CODE}\n```"
    return call_id, [
        ev.CallStarted(
            run_id=run_id,
            ts=ts,
            call_id=call_id,
            parent_id=parent_id,
            kind="rlm",
            depth=depth,
            model="openai/test-model",
            prompt=prompt,
        ),
        ev.TurnStarted(run_id=run_id, ts=ts, call_id=call_id, index=0),
        ev.LLMRequestSent(
            run_id=run_id,
            ts=ts,
            call_id=call_id,
            request_id=request,
            model="openai/test-model",
            messages=2,
            reserved_tokens=2000,
        ),
        ev.LLMResponded(
            run_id=run_id,
            ts=ts + 1,
            call_id=call_id,
            request_id=request,
            model="openai/test-model",
            content=reply,
            input_tokens=1000,
            output_tokens=50,
            cost_usd=0.01,
            latency_s=1.0,
            finish_reason="stop",
            truncated=False,
            attempts=1,
        ),
    ]


def rlm_call_end(
    run_id: str, call_id: str, ts: float, answer: str, stderr: str = "", error: str | None = None
) -> list[ev.Event]:
    """The closing events of an RLM call: its cell ran, it answered, it finished."""
    return [
        ev.CellExecuted(
            run_id=run_id,
            ts=ts,
            call_id=call_id,
            turn=0,
            index=0,
            code=ROOT_CODE,
            stdout="3\n",
            stderr=stderr,
            error=error,
            duration_s=0.25,
        ),
        ev.TurnExecuted(
            run_id=run_id,
            ts=ts,
            call_id=call_id,
            index=0,
            reply="Let me look.",
            code_blocks=1,
            observation="3\n",
            duration_s=1.5,
        ),
        ev.AnswerSubmitted(run_id=run_id, ts=ts, call_id=call_id, answer=answer, source="FINAL"),
        ev.CallFinished(
            run_id=run_id,
            ts=ts,
            call_id=call_id,
            status="ok",
            response=answer,
            input_tokens=1000,
            output_tokens=50,
            cost_usd=0.01,
        ),
    ]


def synthetic_run(
    fanout: int = 3, *, run_id: str = "run-1", t0: float = 1_700_000_000.0, finish: bool = True
) -> Iterator[ev.Event]:
    """A whole run: root RLM call, `fanout` LLM sub-calls, one depth-2 RLM child with a child."""
    yield ev.RunStarted(
        run_id=run_id,
        ts=t0,
        query="What is this about?",
        mode="rlm",
        model="openai/test-model",
        sub_model="openai/test-model",
        profile="default",
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
    yield ev.RunFinished(
        run_id=run_id,
        ts=t0 + 5,
        status="completed",
        answer="The answer is 42.",
        cost_usd=0.02 + 0.001 * (fanout + 1),
        input_tokens=0,
        output_tokens=0,
        turns=2,
        sub_calls=fanout + 2,
        max_depth_reached=2,
        wall_s=5.0,
        unpriced=False,
    )
