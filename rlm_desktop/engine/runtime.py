"""What every call of one run shares: settings, ledger, LLM client, events, ids and live workers."""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.config import RunConfig
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
from rlm_desktop.engine.llm import Completion, LLMClient, LLMError, Message
from rlm_desktop.engine.pricing import ModelInfo
from rlm_desktop.engine.profiles import Profile
from rlm_desktop.engine.reply_acceptance import within_hold
from rlm_desktop.engine.sandbox.launcher import Launcher
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
    launcher: Launcher
    stats: RunStats = field(default_factory=RunStats)
    workers: set[WorkerProcess] = field(default_factory=set)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _last_budget_event: float = 0.0

    def emit(self, event: Event) -> None:
        """Publish an event of this run."""
        self.bus.publish(event)

    def new_id(self, prefix: str) -> str:
        """A short id unique within the run, e.g. `c12`."""
        return f"{prefix}{next(self._ids)}"

    def ledger_changed(self, totals: LedgerTotals, force: bool = False) -> None:
        """Emit `BudgetUpdated`, at most every 100 ms unless forced."""
        now = time.monotonic()
        if not force and now - self._last_budget_event < BUDGET_EVENT_INTERVAL_S:
            return
        self._last_budget_event = now
        self.emit(
            BudgetUpdated(
                run_id=self.run_id,
                cost_usd=totals.cost_usd,
                tokens=totals.input_tokens + totals.output_tokens,
                sub_calls=totals.sub_calls,
                in_flight=totals.in_flight,
                unpriced_calls=totals.unpriced_calls,
            )
        )

    def budget_refused(self, call_id: str | None, error: BudgetExceededError) -> None:
        """Tell subscribers that `call_id` was refused by a cap."""
        self.emit(
            BudgetExceeded(
                run_id=self.run_id, call_id=call_id, limit=error.limit, detail=error.detail
            )
        )

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
        self.emit(
            CallStarted(
                run_id=self.run_id,
                call_id=call_id,
                parent_id=parent_id,
                kind=kind,
                depth=depth,
                model=model,
                prompt=prompt,
            )
        )

    def call_opened(self, call_id: str, messages: list[Message]) -> None:
        """Emit `CallOpened` for a conversation that opens with a system prompt: that prompt
        and the messages after it, as the call's first request sends them (an LLM call passes
        the system prompt alone: its one user message is its prompt)."""
        system, *opening = messages
        self.emit(
            CallOpened(
                run_id=self.run_id,
                call_id=call_id,
                system_prompt=system["content"],
                opening=[dict(message) for message in opening],
            )
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
        self.emit(
            CallFinished(
                run_id=self.run_id,
                call_id=call_id,
                status=status,
                response=response,
                input_tokens=tokens[0],
                output_tokens=tokens[1],
                cost_usd=cost,
                error=error,
            )
        )

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
        except BudgetExceededError as error:
            self.call_finished(call_id, error.status, error=error.detail)
            raise
        except LLMError as error:
            self.call_finished(call_id, "error", error=str(error))
            raise
        except asyncio.CancelledError:
            self.call_finished(call_id, "cancelled", error="cancelled")
            raise
        except Exception as error:
            self.call_finished(call_id, "error", error=internal_error(error))
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

    async def request(
        self, call_id: str, model: str, messages: list[Message], max_output_tokens: int
    ) -> Completion:
        """One LLM request with its reservation, retries and events.

        While `model` has not yet reported its usage, its requests go one at a time (the first is
        the ledger's probe, see `ledger`). Raises `BudgetExceededError` before sending when what
        the request would hold does not fit, and `LLMError` when the provider fails for good; a
        request cancelled in flight is charged what it held.
        """
        info = self.llm.info(model)
        max_output = max(1, min(max_output_tokens, info.max_output_tokens))
        calibration = self.ledger.calibration
        probe = await calibration.take_turn(model)
        try:
            return await self._reserved_request(call_id, info, messages, max_output)
        finally:
            if probe:
                calibration.probe_ended(model)

    async def _reserved_request(
        self, call_id: str, info: ModelInfo, messages: list[Message], max_output: int
    ) -> Completion:
        model = info.name
        ledger = self.ledger
        try:
            reservation = ledger.reserve(info, estimate_messages(messages, model), max_output)
        except BudgetExceededError as error:
            self.budget_refused(call_id, error)
            raise
        request_id = self.new_id("r")
        self.emit(
            LLMRequestSent(
                run_id=self.run_id,
                call_id=call_id,
                request_id=request_id,
                model=model,
                messages=len(messages),
                reserved_tokens=reservation.tokens,
                reserved_output_tokens=reservation.output_tokens,
                reserved_cost_usd=info.cost(reservation.input_tokens, reservation.output_tokens),
            )
        )

        def on_retry(attempt: int, delay: float, reason: str) -> None:
            self.emit(
                LLMRetried(
                    run_id=self.run_id,
                    call_id=call_id,
                    request_id=request_id,
                    attempt=attempt,
                    delay_s=delay,
                    reason=reason,
                )
            )

        try:
            completion = await self.llm.complete(model, messages, max_output, on_retry)
        except LLMError as error:
            if error.replied:
                ledger.charge(reservation)  # a reply too large to read was still produced
            else:
                # Nothing is known to be spent; a model without a price still counts as an
                # unpriced call, as it does in the tree.
                ledger.settle(reservation, 0, 0, info.cost(0, 0), replied=False)
            self._responded(call_id, request_id, model, None, error)
            raise
        except BaseException:
            ledger.charge(reservation)  # cancelled in flight: the provider may have billed it
            raise
        reported_input = completion.input_tokens
        completion = within_hold(completion, reservation)
        ledger.settle(
            reservation,
            completion.input_tokens,
            completion.output_tokens,
            completion.cost_usd,
            reported_input=reported_input,
        )
        self._responded(call_id, request_id, model, completion, None)
        return completion

    def _responded(
        self,
        call_id: str,
        request_id: str,
        model: str,
        completion: Completion | None,
        error: LLMError | None,
    ) -> None:
        self.emit(
            LLMResponded(
                run_id=self.run_id,
                call_id=call_id,
                request_id=request_id,
                model=model,
                content=completion.content if completion else "",
                input_tokens=completion.input_tokens if completion else 0,
                output_tokens=completion.output_tokens if completion else 0,
                cost_usd=completion.cost_usd if completion else self.llm.info(model).cost(0, 0),
                latency_s=completion.latency_s if completion else 0.0,
                finish_reason=completion.finish_reason if completion else None,
                stopped_early=completion.stopped_early if completion else None,
                truncated=completion.truncated if completion else False,
                attempts=completion.attempts if completion else (error.attempts if error else 1),
                error=str(error) if error else None,
            )
        )
