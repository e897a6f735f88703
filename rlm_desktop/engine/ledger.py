"""The tree-wide budget ledger: every call reserves its worst case before it is sent.

All methods run on the event loop's thread, so check-and-reserve is atomic without locks: fan-out in
flight can never overshoot a cap, however many sub-calls are pending.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rlm_desktop.engine.config import Budget
from rlm_desktop.engine.pricing import ModelInfo


class BudgetExceededError(Exception):
    """A call was refused because it could take the run past one of its caps."""

    def __init__(self, limit: str, detail: str) -> None:
        super().__init__(detail)
        self.limit = limit
        self.detail = detail

    @property
    def status(self) -> Literal["timeout", "budget_exceeded"]:
        """The run status this refusal ends a call with: the time limit is a timeout."""
        return "timeout" if self.limit == "timeout_s" else "budget_exceeded"


@dataclass
class Reservation:
    """What one in-flight call holds against the caps until it settles."""

    id: int
    tokens: int
    cost_usd: float


@dataclass(frozen=True)
class LedgerTotals:
    """Spent plus reserved, for display."""

    cost_usd: float
    input_tokens: int
    output_tokens: int
    sub_calls: int
    in_flight: int
    unpriced_calls: int


class BudgetLedger:
    """Reserve-then-settle accounting for cost, tokens, sub-calls and wall time of one run."""

    def __init__(self, budget: Budget, on_change: Callable[[LedgerTotals], None] | None = None):
        self.budget = budget
        self._on_change = on_change
        self._ids = itertools.count(1)
        self._reserved: dict[int, Reservation] = {}
        self.reserved_tokens = 0
        self.reserved_cost_usd = 0.0
        self.spent_cost_usd = 0.0
        self.input_tokens = 0
        self.output_tokens = 0
        self.sub_calls = 0
        self.unpriced_calls = 0
        self.started = time.monotonic()

    def claim_sub_call(self) -> None:
        """Count one sub-call (`llm_query` or `rlm_query`) against `max_sub_calls`."""
        cap = self.budget.max_sub_calls
        if cap is not None and self.sub_calls + 1 > cap:
            raise BudgetExceededError(
                "max_sub_calls", f"sub-call budget exhausted: {self.sub_calls} of {cap} used"
            )
        self.sub_calls += 1
        self._changed()

    def reserve(self, model: ModelInfo, input_tokens: int, max_output_tokens: int) -> Reservation:
        """Hold the worst case of a call; raise `BudgetExceededError` if it might not fit."""
        self.check_time()
        tokens = input_tokens + max_output_tokens
        cost = model.cost(input_tokens, max_output_tokens) or 0.0
        token_cap = self.budget.max_tokens
        used_tokens = self.input_tokens + self.output_tokens + self.reserved_tokens
        if token_cap is not None and used_tokens + tokens > token_cap:
            raise BudgetExceededError(
                "max_tokens",
                f"token budget: {used_tokens:,} used or reserved, this call could take {tokens:,} "
                f"more, cap {token_cap:,}",
            )
        cost_cap = self.budget.max_cost_usd
        used_cost = self.spent_cost_usd + self.reserved_cost_usd
        if cost_cap is not None and used_cost + cost > cost_cap:
            raise BudgetExceededError(
                "max_cost_usd",
                f"cost budget: ${used_cost:.4f} spent or reserved, this call could cost "
                f"${cost:.4f} more, cap ${cost_cap:.4f}",
            )
        reservation = Reservation(next(self._ids), tokens, cost)
        self._reserved[reservation.id] = reservation
        self.reserved_tokens += tokens
        self.reserved_cost_usd += cost
        self._changed()
        return reservation

    def settle(
        self, reservation: Reservation, input_tokens: int, output_tokens: int, cost: float | None
    ) -> None:
        """Replace a reservation with what the call actually used."""
        self._drop(reservation)
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.spent_cost_usd += cost
        self._changed()

    def release(self, reservation: Reservation) -> None:
        """Give a reservation back unused (the call failed before using anything)."""
        if self._drop(reservation):
            self._changed()

    def _drop(self, reservation: Reservation) -> bool:
        if self._reserved.pop(reservation.id, None) is None:
            return False
        self.reserved_tokens -= reservation.tokens
        self.reserved_cost_usd = max(0.0, self.reserved_cost_usd - reservation.cost_usd)
        if not self._reserved:
            self.reserved_cost_usd = 0.0  # no float drift once nothing is in flight
        return True

    def check_time(self) -> None:
        """Raise when the run's wall-clock budget is spent."""
        limit = self.budget.timeout_s
        if limit is not None and time.monotonic() - self.started > limit:
            raise BudgetExceededError("timeout_s", f"time budget of {limit:g} s is spent")

    def totals(self) -> LedgerTotals:
        """Spent plus reserved amounts, and calls in flight."""
        return LedgerTotals(
            cost_usd=self.spent_cost_usd + self.reserved_cost_usd,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            sub_calls=self.sub_calls,
            in_flight=len(self._reserved),
            unpriced_calls=self.unpriced_calls,
        )

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self.totals())
