"""Builders of hand-made engine events, for tests and benchmarks that need no engine.

Each builder returns the events one piece of a run publishes, in order: a run's start and end, a
call's start and end, one provider exchange, one turn's opening and close, a whole LLM sub-call.
The run shapes in `tests/store/synthetic.py`, `tests/ui/synthetic.py` and the UI benchmark are
put together from these. A `ts` of None leaves the event's own default (the current time).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from rlm_desktop.engine import events as ev
from rlm_desktop.engine.bus import EventBus

MODEL = "openai/test-model"


@dataclass
class FakeRun:
    """What `Store.record` needs from a run: an id and a real event bus."""

    run_id: str
    bus: EventBus


def _at(ts: float | None) -> dict[str, Any]:
    return {} if ts is None else {"ts": ts}


def restamp(events: Iterable[ev.Event], start: float, step: float = 0.001) -> Iterator[ev.Event]:
    """The events again, the first at `start + step` and each next one `step` later."""
    now = start
    for event in events:
        now += step
        yield replace(event, ts=now)


def run_started(
    run_id: str,
    ts: float | None = None,
    *,
    query: str,
    mode: str,
    settings: dict[str, Any],
    documents: list[dict[str, Any]],
    profile: str = "default",
    model: str = MODEL,
) -> ev.RunStarted:
    """A run began with `model` for the root and its sub-calls."""
    return ev.RunStarted(
        run_id=run_id,
        query=query,
        mode=mode,
        model=model,
        sub_model=model,
        profile=profile,
        settings=settings,
        documents=documents,
        **_at(ts),
    )


def run_finished(
    run_id: str,
    ts: float | None = None,
    *,
    answer: str,
    cost_usd: float,
    input_tokens: int,
    output_tokens: int,
    turns: int,
    sub_calls: int,
    max_depth_reached: int,
    wall_s: float,
    unpriced: bool = False,
) -> ev.RunFinished:
    """A run completed with `answer`."""
    return ev.RunFinished(
        run_id=run_id,
        status="completed",
        answer=answer,
        cost_usd=cost_usd,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        turns=turns,
        sub_calls=sub_calls,
        max_depth_reached=max_depth_reached,
        wall_s=wall_s,
        unpriced=unpriced,
        **_at(ts),
    )


def call_started(
    run_id: str,
    call_id: str,
    parent_id: str | None,
    *,
    kind: ev.CallKind = "llm",
    depth: int = 1,
    prompt: str = "p",
    model: str = MODEL,
    ts: float | None = None,
) -> ev.CallStarted:
    """A call under `parent_id` (None for a root) was dispatched."""
    return ev.CallStarted(
        run_id=run_id,
        call_id=call_id,
        parent_id=parent_id,
        kind=kind,
        depth=depth,
        model=model,
        prompt=prompt,
        **_at(ts),
    )


def call_finished(
    run_id: str,
    call_id: str,
    *,
    response: str = "",
    input_tokens: int = 0,
    output_tokens: int = 0,
    cost_usd: float | None = None,
    status: ev.CallStatus = "ok",
    error: str | None = None,
    ts: float | None = None,
) -> ev.CallFinished:
    """A call ended with `status`."""
    return ev.CallFinished(
        run_id=run_id,
        call_id=call_id,
        status=status,
        response=response,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost_usd,
        error=error,
        **_at(ts),
    )


def failed_call(
    run_id: str, call_id: str, parent_id: str, error: str, *, depth: int = 1, model: str = "m"
) -> list[ev.Event]:
    """An LLM sub-call that started and failed with `error`, without usage or cost."""
    return [
        call_started(run_id, call_id, parent_id, depth=depth, model=model),
        call_finished(run_id, call_id, status="error", error=error),
    ]


def exchange(
    run_id: str,
    call_id: str,
    request_id: str,
    ts: float,
    *,
    content: str,
    messages: int,
    reserved_tokens: int,
    input_tokens: int,
    output_tokens: int,
    cost_usd: float,
    latency_s: float,
    model: str = MODEL,
) -> list[ev.Event]:
    """One request sent at `ts` and its reply `latency_s` later."""
    return [
        ev.LLMRequestSent(
            run_id=run_id,
            ts=ts,
            call_id=call_id,
            request_id=request_id,
            model=model,
            messages=messages,
            reserved_tokens=reserved_tokens,
        ),
        ev.LLMResponded(
            run_id=run_id,
            ts=ts + latency_s,
            call_id=call_id,
            request_id=request_id,
            model=model,
            content=content,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost_usd,
            latency_s=latency_s,
            finish_reason="stop",
            truncated=False,
            attempts=1,
        ),
    ]


def llm_call(
    run_id: str,
    call_id: str,
    parent_id: str,
    depth: int,
    ts: float,
    *,
    prompt: str,
    response: str,
    request_id: str,
    reserved_tokens: int,
    input_tokens: int,
    output_tokens: int,
    cost_usd: float,
    latency_s: float,
    model: str = MODEL,
) -> list[ev.Event]:
    """A whole LLM sub-call: started, its one exchange, finished with the reply's usage."""
    usage: dict[str, Any] = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": cost_usd,
    }
    return [
        call_started(run_id, call_id, parent_id, depth=depth, prompt=prompt, model=model, ts=ts),
        *exchange(
            run_id,
            call_id,
            request_id,
            ts,
            content=response,
            messages=1,
            reserved_tokens=reserved_tokens,
            latency_s=latency_s,
            model=model,
            **usage,
        ),
        call_finished(run_id, call_id, response=response, ts=ts + latency_s, **usage),
    ]


def turn_closed(
    run_id: str,
    call_id: str,
    turn: int,
    ts: float,
    *,
    code: str,
    stdout: str,
    reply: str,
    observation: str,
    cell_s: float,
    turn_s: float,
    stderr: str = "",
    error: str | None = None,
) -> list[ev.Event]:
    """The close of turn `turn`: its one cell ran, then the turn was executed."""
    return [
        ev.CellExecuted(
            run_id=run_id,
            ts=ts,
            call_id=call_id,
            turn=turn,
            index=0,
            code=code,
            stdout=stdout,
            stderr=stderr,
            error=error,
            duration_s=cell_s,
        ),
        ev.TurnExecuted(
            run_id=run_id,
            ts=ts,
            call_id=call_id,
            index=turn,
            reply=reply,
            code_blocks=1,
            observation=observation,
            duration_s=turn_s,
        ),
    ]


def answered(
    run_id: str,
    call_id: str,
    ts: float,
    answer: str,
    *,
    input_tokens: int,
    output_tokens: int,
    cost_usd: float,
) -> list[ev.Event]:
    """An RLM call submitted `answer` with FINAL and finished."""
    return [
        ev.AnswerSubmitted(run_id=run_id, ts=ts, call_id=call_id, answer=answer, source="FINAL"),
        call_finished(
            run_id,
            call_id,
            response=answer,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost_usd,
            ts=ts,
        ),
    ]
