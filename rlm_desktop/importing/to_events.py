"""A trajectory as the engine events its run would have emitted, so that the store's own writer
keeps it and every view reads it as it reads a local run.

Times the file records are used as they are; the rest are rebuilt on a clock that starts when
the run did (or now) and moves on by the durations the file does record: a turn's request, then
its cells in order, each cell's sub-calls inside it.
"""

from __future__ import annotations

from typing import Any, get_args

from rlm_desktop.engine.events import (
    AnswerSource,
    AnswerSubmitted,
    BudgetUpdated,
    CallFinished,
    CallOpened,
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
from rlm_desktop.importing.trajectory import Call, Request, Trajectory, Turn


class _Emitter:
    def __init__(self, run_id: str, start: float) -> None:
        self.run_id = run_id
        self.now = start
        self.events: list[Event] = []
        self._requests = 0

    def call(self, call: Call, parent_id: str | None) -> None:
        start = call.started_at if call.started_at is not None else self.now
        self.now = start
        common = {"run_id": self.run_id, "call_id": call.id}
        self.events.append(CallStarted(
            **common, ts=start, parent_id=parent_id, kind=call.kind,  # type: ignore[arg-type]
            depth=call.depth, model=call.model, prompt=call.prompt,
        ))  # fmt: skip
        if call.kind == "rlm":
            opening = call.opening or [{"role": "user", "content": call.prompt}]
            self.events.append(CallOpened(
                **common, ts=start, system_prompt=call.system_prompt or "", opening=opening
            ))  # fmt: skip
        requests = call.requests if call.requests is not None else _rebuilt_requests(call)
        for request in (r for r in requests if r.turn is None and call.kind == "llm"):
            self.request(call, request, call.response)
        for index, turn in enumerate(call.turns):
            self.turn(call, index, turn, [r for r in requests if r.turn == index])
        for request in (r for r in requests if r.turn is None and call.kind == "rlm"):
            self.request(call, request, call.answer or "")
        if call.answer is not None:
            source = call.answer_source if call.answer_source in get_args(AnswerSource) else "FINAL"
            self.events.append(AnswerSubmitted(
                **common, ts=self.now, answer=call.answer, source=source,  # type: ignore[arg-type]
                sources=call.sources,
            ))  # fmt: skip
        end = self.now
        if call.started_at is not None and call.wall_s is not None:
            end = max(call.started_at + call.wall_s, end)
        elif call.wall_s is not None:
            end = max(start + call.wall_s, end)
        self.now = end
        self.events.append(CallFinished(
            **common, ts=end, status=call.status, response=call.response,  # type: ignore[arg-type]
            input_tokens=call.input_tokens, output_tokens=call.output_tokens,
            cost_usd=call.cost_usd, error=call.error,
        ))  # fmt: skip

    def turn(self, call: Call, index: int, turn: Turn, requests: list[Request]) -> None:
        start = turn.started_at if turn.started_at is not None else self.now
        self.now = start
        self.events.append(TurnStarted(run_id=self.run_id, ts=start, call_id=call.id, index=index))
        for request in requests:
            self.request(call, request, turn.reply)
        for position, cell in enumerate(turn.cells):
            cell_start = self.now
            for child in cell.calls:
                self.call(child, call.id)
            self.now = max(cell_start + cell.duration_s, self.now)
            self.events.append(CellExecuted(
                run_id=self.run_id, ts=self.now, call_id=call.id, turn=index, index=position,
                code=cell.code, stdout=cell.stdout, stderr=cell.stderr, error=cell.error,
                duration_s=cell.duration_s, timed_out=cell.timed_out,
                variables_lost=cell.variables_lost, variables=cell.variables,
            ))  # fmt: skip
        if not turn.finished:
            return
        if turn.duration_s is not None:
            self.now = max(start + turn.duration_s, self.now)
        self.events.append(TurnExecuted(
            run_id=self.run_id, ts=self.now, call_id=call.id, index=index, reply=turn.reply,
            code_blocks=len(turn.cells), observation=turn.observation,
            duration_s=turn.duration_s if turn.duration_s is not None else self.now - start,
        ))  # fmt: skip

    def request(self, call: Call, request: Request, content: str) -> None:
        self._requests += 1
        request_id = f"r{self._requests}"
        sent = request.sent_at if request.sent_at is not None else self.now
        latency = request.latency_s or 0.0
        tokens = request.input_tokens + request.output_tokens
        common: dict[str, Any] = {
            "run_id": self.run_id,
            "call_id": call.id,
            "request_id": request_id,
            "model": request.model or call.model,
        }
        self.events.append(LLMRequestSent(
            **common, ts=sent, messages=request.messages, reserved_tokens=tokens,
            reserved_output_tokens=request.output_tokens, reserved_cost_usd=request.cost_usd,
        ))  # fmt: skip
        self.now = max(self.now, sent + latency)
        self.events.append(LLMResponded(
            **common, ts=sent + latency,
            content=request.content if request.content is not None else content,
            input_tokens=request.input_tokens, output_tokens=request.output_tokens,
            cost_usd=request.cost_usd, latency_s=latency, finish_reason=request.finish_reason,
            truncated=request.truncated, attempts=request.attempts, error=request.error,
        ))  # fmt: skip


def _rebuilt_requests(call: Call) -> list[Request]:
    """One request per turn (an LLM call: one; a call asked for its answer: one more), the
    call's usage shared among them, each taking what its turn did not spend in its cells."""
    turns: list[int | None] = list(range(len(call.turns)))
    if call.kind == "llm" or (call.answer_source == "partial" and call.answer is not None):
        turns.append(None)
    if not turns:
        return []
    share = len(turns)
    requests = []
    for position, turn in enumerate(turns):
        last = position == share - 1
        latency = call.wall_s if call.kind == "llm" else None
        if turn is not None:
            spent = sum(cell.duration_s for cell in call.turns[turn].cells)
            took = call.turns[turn].duration_s
            latency = max(took - spent, 0.0) if took is not None else 0.0
        requests.append(Request(
            turn=turn, model=call.model,
            input_tokens=_part(call.input_tokens, share, last),
            output_tokens=_part(call.output_tokens, share, last),
            cost_usd=call.cost_usd / share if call.cost_usd is not None else None,
            latency_s=latency,
        ))  # fmt: skip
    return requests


def _part(total: int, parts: int, last: bool) -> int:
    return total - (parts - 1) * (total // parts) if last else total // parts


def to_events(trajectory: Trajectory, run_id: str, now: float) -> list[Event]:
    """The events of `trajectory`'s run, as session `run_id`; `now` starts a run with no time."""
    start = trajectory.started_at if trajectory.started_at is not None else now
    emitter = _Emitter(run_id, start)
    documents = [
        {"name": d.name, "path": "", "type": d.type or "text", "chars": d.chars, "tokens": d.tokens}
        for d in trajectory.documents
    ]
    emitter.events.append(RunStarted(
        run_id=run_id, ts=start, query=trajectory.query, mode=trajectory.mode,
        model=trajectory.model, sub_model=trajectory.sub_model or trajectory.model,
        profile=trajectory.profile, settings=trajectory.settings, documents=documents,
    ))  # fmt: skip
    if trajectory.chosen_mode in ("direct", "rlm"):
        emitter.events.append(ModeChosen(
            run_id=run_id, ts=start, mode=trajectory.chosen_mode,  # type: ignore[arg-type]
            reason=trajectory.mode_reason or "as the imported run recorded it",
        ))  # fmt: skip
    emitter.call(trajectory.root, None)
    calls = trajectory.calls()
    cost = sum(c.cost_usd or 0.0 for c in calls)
    tokens_in = sum(c.input_tokens for c in calls)
    tokens_out = sum(c.output_tokens for c in calls)
    unpriced = sum(1 for c in calls if c.cost_usd is None)
    end = emitter.now
    if trajectory.ended_at is not None:
        end = max(trajectory.ended_at, end)
    elif trajectory.wall_s is not None:
        end = max(start + trajectory.wall_s, end)
    wall_s = trajectory.wall_s if trajectory.wall_s is not None else end - start
    deepest = trajectory.max_depth_reached
    if deepest is None:
        deepest = max(c.depth for c in calls)
    if trajectory.unpriced is not None:
        unpriced = int(trajectory.unpriced)
    emitter.events.append(BudgetUpdated(
        run_id=run_id, ts=end, cost_usd=cost, tokens=tokens_in + tokens_out,
        sub_calls=len(calls) - 1, in_flight=0, unpriced_calls=unpriced,
    ))  # fmt: skip
    emitter.events.append(RunFinished(
        run_id=run_id, ts=end, status=trajectory.status,  # type: ignore[arg-type]
        answer=trajectory.answer, cost_usd=cost, input_tokens=tokens_in,
        output_tokens=tokens_out, turns=len(trajectory.root.turns), sub_calls=len(calls) - 1,
        max_depth_reached=deepest, wall_s=wall_s,
        unpriced=unpriced > 0, error=trajectory.error, sandbox=trajectory.sandbox,
        answer_kind=trajectory.answer_kind,  # type: ignore[arg-type]
    ))  # fmt: skip
    return emitter.events
