"""What every call of one run shares: settings, ledger, LLM client, events, ids and live workers."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.config import RunConfig
from rlm_desktop.engine.events import (
    BudgetExceeded,
    BudgetUpdated,
    Event,
    LLMRequestSent,
    LLMResponded,
    LLMRetried,
)
from rlm_desktop.engine.ledger import BudgetExceededError, BudgetLedger, LedgerTotals
from rlm_desktop.engine.llm import Completion, LLMClient, LLMError, Message
from rlm_desktop.engine.profiles import Profile
from rlm_desktop.engine.sandbox.launcher import Launcher
from rlm_desktop.engine.sandbox.process import WorkerProcess
from rlm_desktop.engine.tokens import estimate_messages

BUDGET_EVENT_INTERVAL_S = 0.1


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

    def kill_workers(self) -> None:
        """Kill every live worker of the run at once."""
        for worker in list(self.workers):
            worker.kill()

    async def request(
        self, call_id: str, model: str, messages: list[Message], max_output_tokens: int
    ) -> Completion:
        """One LLM request with its reservation, retries and events.

        Raises `BudgetExceededError` before sending when the worst case does not fit, and `LLMError`
        when the provider fails for good.
        """
        info = self.llm.info(model)
        max_output = max(1, min(max_output_tokens, info.max_output_tokens))
        try:
            reservation = self.ledger.reserve(info, estimate_messages(messages), max_output)
        except BudgetExceededError as error:
            self.emit(
                BudgetExceeded(
                    run_id=self.run_id, call_id=call_id, limit=error.limit, detail=error.detail
                )
            )
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
            self.ledger.release(reservation)
            self._responded(call_id, request_id, model, None, error)
            raise
        except BaseException:
            self.ledger.release(reservation)
            raise
        self.ledger.settle(
            reservation, completion.input_tokens, completion.output_tokens, completion.cost_usd
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
                cost_usd=completion.cost_usd if completion else 0.0,
                latency_s=completion.latency_s if completion else 0.0,
                finish_reason=completion.finish_reason if completion else None,
                truncated=completion.truncated if completion else False,
                attempts=completion.attempts if completion else (error.attempts if error else 1),
                error=str(error) if error else None,
            )
        )
