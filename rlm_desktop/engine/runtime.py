"""What every call of one run shares: settings, ledger, LLM client, events, ids and live workers."""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.config import RunConfig
from rlm_desktop.engine.constrained_replies import ReplyConstraint
from rlm_desktop.engine.estimates import estimate_messages
from rlm_desktop.engine.events import (
    BudgetExceeded,
    BudgetUpdated,
    CallFinished,
    CallKind,
    CallOpened,
    CallStarted,
    CallStatus,
    Event,
    LLMRequestSent,
    LLMResponded,
    LLMRetried,
)
from rlm_desktop.engine.ledger import BudgetExceededError, BudgetLedger, LedgerTotals
from rlm_desktop.engine.live_reply import LiveReply
from rlm_desktop.engine.llm import Completion, LLMClient, LLMError, Message
from rlm_desktop.engine.message_roles import sendable_messages
from rlm_desktop.engine.pricing import ModelInfo
from rlm_desktop.engine.profiles import Profile
from rlm_desktop.engine.reply_acceptance import within_hold
from rlm_desktop.engine.reply_stream import StreamStop
from rlm_desktop.engine.sandbox.connection import WorkerLauncher
from rlm_desktop.engine.sandbox.process import WorkerProcess

BUDGET_EVENT_INTERVAL_S = 0.1


def internal_error(error: BaseException) -> str:
    """One line for an exception the engine did not expect: "internal error: <type>: <message>"."""
    message = " ".join(str(error).split())
    return f"internal error: {type(error).__name__}" + (f": {message}" if message else "")


@dataclass
class RunStats:
    """Counters the run reports at the end."""

    root_turns: int = 0
    max_depth_reached: int = 1


@dataclass
class Runtime:
    """Shared services of one run's call tree."""

    run_id: str
    config: RunConfig
    profile: Profile
    bus: EventBus
    llm: LLMClient
    ledger: BudgetLedger
    scratch_dir: Path
    launcher: WorkerLauncher
    stats: RunStats = field(default_factory=RunStats)
    workers: set[WorkerProcess] = field(default_factory=set)
    stop_reason: tuple[CallStatus, str] = ("cancelled", "cancelled")
    """How a call cancelled from above ends: `cancelled`, or `timeout` once the run's time struck."""
    reply_constraint: ReplyConstraint | None = None
    """How the server holds an RLM turn's reply to prose and one block, when the profile asks
    (`constrained_replies`) and the server can; learnt before the root starts."""
    _ids: dict[str, itertools.count[int]] = field(default_factory=dict)
    _last_budget_event: float = 0.0

    def emit(self, event: Event) -> None:
        """Publish an event of this run."""
        self.bus.publish(event)

    def announce(self, kind: type[Event], /, **fields: Any) -> None:
        """Publish an event of `kind` of this run, made of `fields` and the run's id."""
        self.emit(kind(run_id=self.run_id, **fields))

    def new_id(self, prefix: str) -> str:
        """A short id unique within the run, e.g. `c12`: each prefix counts from 1 on its own,
        so the calls of the tree are c1, c2, ... with no gaps however many requests (r1, r2,
        ...) they make."""
        counter = self._ids.setdefault(prefix, itertools.count(1))
        return f"{prefix}{next(counter)}"

    def ledger_changed(self, totals: LedgerTotals, force: bool = False) -> None:
        """Emit `BudgetUpdated`, at most every 100 ms unless forced."""
        now = time.monotonic()
        if not force and now - self._last_budget_event < BUDGET_EVENT_INTERVAL_S:
            return
        self._last_budget_event = now
        tokens = totals.input_tokens + totals.output_tokens
        self.announce(
            BudgetUpdated, cost_usd=totals.cost_usd, tokens=tokens, sub_calls=totals.sub_calls,
            in_flight=totals.in_flight, unpriced_calls=totals.unpriced_calls,
        )  # fmt: skip

    def budget_refused(self, call_id: str | None, error: BudgetExceededError) -> None:
        """Tell subscribers that `call_id` was refused by a cap."""
        self.announce(BudgetExceeded, call_id=call_id, limit=error.limit, detail=error.detail)

    def call_started(
        self,
        call_id: str,
        parent_id: str | None,
        kind: CallKind,
        depth: int,
        model: str,
        prompt: str,
    ) -> None:
        """Emit `CallStarted` for a call of this run."""
        self.announce(
            CallStarted, call_id=call_id, parent_id=parent_id, kind=kind, depth=depth,
            model=model, prompt=prompt,
        )  # fmt: skip

    def call_opened(self, call_id: str, messages: list[Message]) -> None:
        """Emit `CallOpened` for a conversation that opens with a system prompt: that prompt
        and the messages after it, as the call's first request sends them (an LLM call passes
        the system prompt alone: its one user message is its prompt)."""
        system, *opening = messages
        opening_copy = [dict(message) for message in opening]
        self.announce(
            CallOpened, call_id=call_id, system_prompt=system["content"], opening=opening_copy
        )

    def call_finished(
        self,
        call_id: str,
        status: CallStatus,
        *,
        response: str = "",
        tokens: tuple[int, int] = (0, 0),
        cost: float | None = 0.0,
        error: str | None = None,
    ) -> None:
        """Emit `CallFinished` for a call of this run."""
        self.announce(
            CallFinished, call_id=call_id, status=status, response=response,
            input_tokens=tokens[0], output_tokens=tokens[1], cost_usd=cost, error=error,
        )  # fmt: skip

    async def llm_call(
        self,
        *,
        parent_id: str | None,
        depth: int,
        model: str,
        prompt: str,
        messages: list[Message],
        max_output_tokens: int,
    ) -> tuple[str, Completion]:
        """One plain LLM call as a node of the tree: started, requested, finished.

        Returns the call's id and its completion; `BudgetExceededError`, `LLMError`, cancellation and
        any other exception are re-raised after the call is recorded as finished with the matching
        status.
        """
        call_id = self.new_id("c")
        self.call_started(call_id, parent_id, "llm", depth, model, prompt)
        if messages and messages[0]["role"] == "system":
            self.call_opened(call_id, messages[:1])
        try:
            completion = await self.request(call_id, model, messages, max_output_tokens)
        except (Exception, asyncio.CancelledError) as error:
            stopped = isinstance(error, asyncio.CancelledError)
            status, message = self.stop_reason if stopped else _ended_by(error)
            self.call_finished(call_id, status, error=message)
            raise
        self.call_finished(
            call_id,
            "ok",
            response=completion.content,
            tokens=(completion.input_tokens, completion.output_tokens),
            cost=completion.cost_usd,
        )
        return call_id, completion

    def kill_workers(self) -> None:
        """Kill every live worker of the run at once."""
        for worker in list(self.workers):
            worker.kill()

    def stop_workers(self, reason: str) -> None:
        """Stop every live worker of the run at once; the cells they were running fail with
        `reason` (the next cell of each call starts a fresh worker)."""
        for worker in list(self.workers):
            worker.stop(reason)

    async def request(
        self,
        call_id: str,
        model: str,
        messages: list[Message],
        max_output_tokens: int,
        stop: StreamStop | None = None,
        constraint: ReplyConstraint | None = None,
    ) -> Completion:
        """One LLM request with its reservation, retries and events.

        Raises `BudgetExceededError` before sending when what the request would hold does not
        fit, and `LLMError` when the provider fails for good; a request cancelled in flight is
        charged what it held. The reply streams in as `ReplyStreamed` events, read no further than
        its `max_tokens` (so what it holds is its worst case, and a fan-out goes out at once),
        and `stop` may end it early (see `reply_stream`). `messages` are recorded as the engine
        built them; what is sent is derived from them (`message_roles`). `constraint` asks the
        server to hold the reply to its shape (`constrained_replies`).
        """
        info = self.llm.info(model)
        max_output = max(1, min(max_output_tokens, info.max_output_tokens))
        return await self._reserved_request(call_id, info, messages, max_output, stop, constraint)

    async def _reserved_request(
        self,
        call_id: str,
        info: ModelInfo,
        messages: list[Message],
        max_output: int,
        stop: StreamStop | None,
        constraint: ReplyConstraint | None,
    ) -> Completion:
        model = info.name
        ledger = self.ledger
        try:
            reservation = ledger.reserve(info, estimate_messages(messages, model), max_output)
        except BudgetExceededError as error:
            self.budget_refused(call_id, error)
            raise
        request_id = self.new_id("r")
        ids = {"call_id": call_id, "request_id": request_id, "model": model}
        held_cost = info.cost(reservation.input_tokens, reservation.output_tokens)
        self.announce(
            LLMRequestSent, **ids, messages=len(messages), reserved_tokens=reservation.tokens,
            reserved_output_tokens=reservation.output_tokens, reserved_cost_usd=held_cost,
        )  # fmt: skip

        live = LiveReply(self.emit, self.run_id, call_id, request_id)

        def on_retry(attempt: int, delay: float, reason: str) -> None:
            live.restart()
            self.announce(
                LLMRetried, call_id=call_id, request_id=request_id, attempt=attempt,
                delay_s=delay, reason=reason,
            )  # fmt: skip

        try:
            sent = sendable_messages(messages, system_role=self.profile.system_role)
            completion = await self.llm.complete(
                model, sent, max_output, on_retry, live.watch(stop), constraint
            )
        except LLMError as error:
            live.restart()
            if error.replied:
                ledger.charge(reservation)  # a reply too large to read was still produced
            else:
                # Nothing is known to be spent; a model without a price still counts as an
                # unpriced call, as it does in the tree.
                ledger.settle(reservation, 0, 0, info.cost(0, 0), replied=False)
            self._responded(ids, error)
            raise
        except BaseException:
            live.restart()
            ledger.charge(reservation)  # cancelled in flight: the provider may have billed it
            raise
        live.flush()
        reported_input = completion.input_tokens
        completion = within_hold(completion, reservation)
        ledger.settle(
            reservation,
            completion.input_tokens,
            completion.output_tokens,
            completion.cost_usd,
            reported_input=reported_input,
        )
        self._responded(ids, completion)
        return completion

    def _responded(self, ids: dict[str, str], outcome: Completion | LLMError) -> None:
        """Emit `LLMResponded` for the request `ids` names (call, request, model): its reply,
        or the error it failed with."""
        if isinstance(outcome, LLMError):
            self.announce(
                LLMResponded, **ids, content="", input_tokens=0, output_tokens=0,
                cost_usd=self.llm.info(ids["model"]).cost(0, 0), latency_s=0.0,
                finish_reason=None, truncated=False, attempts=outcome.attempts, error=str(outcome),
            )  # fmt: skip
            return
        self.announce(
            LLMResponded, **ids, content=outcome.content, input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens, cost_usd=outcome.cost_usd,
            latency_s=outcome.latency_s, finish_reason=outcome.finish_reason,
            truncated=outcome.truncated, attempts=outcome.attempts,
            stopped_early=outcome.stopped_early, cut=outcome.cut,
            arrivals=[list(point) for point in outcome.arrivals],
        )  # fmt: skip


def _ended_by(error: BaseException) -> tuple[CallStatus, str]:
    """The status and the error a call ends with when `error` stopped it."""
    if isinstance(error, BudgetExceededError):
        return error.status, error.detail
    if isinstance(error, LLMError):
        return "error", str(error)
    if isinstance(error, asyncio.CancelledError):
        return "cancelled", "cancelled"
    return "error", internal_error(error)
