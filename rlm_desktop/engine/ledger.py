"""The tree-wide budget ledger: every call reserves what it may cost before it is sent.

All methods run on the event loop's thread, so check-and-reserve is atomic without locks.

How hard the caps are. A call is dispatched only if the settled spend, plus what every call in
flight holds, plus what this call would hold, stays within each cap. A call holds its input
tokens (the app's estimate, times what the provider's reported usage has shown its counts to run
above the estimate: see `calibration`) and its output-token cap, which is sent with the request;
under a dollar cap a model without a price is refused (the user can give it one). A call never
settles above what it held (`reply_acceptance`: its output at most the `max_tokens` sent, its input
at most its hold, what was capped said in the reply's record), so settled spend never passes a
cap, whatever the provider does. What the provider reported still teaches the model's ratio, so
the calls reserved after a reply that ran above its hold hold that much more. No request waits
for another to learn that: every fan-out goes out at once. A call cancelled in flight (the time limit, a stop, the app
killed) is charged what it held: the provider may well have billed it.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rlm_desktop.engine.calibration import UsageCalibration
from rlm_desktop.engine.config import Budget
from rlm_desktop.engine.pricing import ModelInfo

TIME_LIMIT = "timeout_s"


class BudgetExceededError(Exception):
    """A call was refused because it could take the run past one of its caps."""

    def __init__(self, limit: str, detail: str) -> None:
        super().__init__(detail)
        self.limit = limit
        self.detail = detail

    @property
    def status(self) -> Literal["timeout", "budget_exceeded"]:
        """The run status this refusal ends a call with: the time limit is a timeout."""
        return "timeout" if self.limit == TIME_LIMIT else "budget_exceeded"


@dataclass
class Reservation:
    """What one in-flight call holds against the caps until it settles."""

    id: int
    model: ModelInfo
    estimate: int
    """The app's own estimate of the input tokens (what calibration scales)."""
    max_output: int
    input_tokens: int
    output_tokens: int
    cost_usd: float

    @property
    def tokens(self) -> int:
        """Input plus output tokens held."""
        return self.input_tokens + self.output_tokens


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
        self.calibration = UsageCalibration()
        self._on_change = on_change
        self._ids = itertools.count(1)
        self._reserved: dict[int, Reservation] = {}
        self.reserved_tokens = 0
        self.reserved_cost_usd = 0.0
        self.spent_cost_usd = 0.0
        self.input_tokens = 0
        self.output_tokens = 0
        self.held_tokens = 0
        """Of those, the tokens of requests charged at what they held (stopped in flight)."""
        self.sub_calls = 0
        self.unpriced_calls = 0
        self.refusals: Counter[str] = Counter()
        """Calls refused, by the cap that refused them."""
        self.started = time.monotonic()

    @property
    def refused_calls(self) -> int:
        """How many calls a cap refused in this run."""
        return sum(self.refusals.values())

    def claim_sub_call(self) -> None:
        """Count one sub-call (`llm_query` or `rlm_query`) against `max_sub_calls`."""
        cap = self.budget.max_sub_calls
        if cap is not None and self.sub_calls + 1 > cap:
            raise self._refuse(
                "max_sub_calls", f"sub-call budget exhausted: {self.sub_calls} of {cap} used"
            )
        self.sub_calls += 1
        self._changed()

    def reserve(self, model: ModelInfo, estimate: int, max_output_tokens: int) -> Reservation:
        """Hold what a call of `estimate` input tokens may use; raise `BudgetExceededError` if
        that might not fit, or if a dollar cap is set and `model` has no price."""
        self.check_time()
        cost_cap = self.budget.max_cost_usd
        if cost_cap is not None and not model.priced:
            raise self._refuse(
                "max_cost_usd",
                f"{model.name} has no price, so the dollar cap cannot count its calls: give it "
                "a price (the prices setting) or run without a dollar cap",
            )
        held_in, held_out = self.calibration.hold(model.name, estimate, max_output_tokens)
        tokens = held_in + held_out
        cost = model.cost(held_in, held_out) or 0.0
        token_cap = self.budget.max_tokens
        used_tokens = self.input_tokens + self.output_tokens + self.reserved_tokens
        if token_cap is not None and used_tokens + tokens > token_cap:
            raise self._refuse(
                "max_tokens",
                f"token budget: {used_tokens:,} used or reserved, this call could take {tokens:,} "
                f"more, cap {token_cap:,}",
            )
        used_cost = self.spent_cost_usd + self.reserved_cost_usd
        if cost_cap is not None and used_cost + cost > cost_cap:
            raise self._refuse(
                "max_cost_usd",
                f"cost budget: ${used_cost:.4f} spent or reserved, this call could cost "
                f"${cost:.4f} more, cap ${cost_cap:.4f}",
            )
        reservation = Reservation(
            next(self._ids), model, estimate, max_output_tokens, held_in, held_out, cost
        )
        self._reserved[reservation.id] = reservation
        self.reserved_tokens += tokens
        self.reserved_cost_usd += cost
        self._changed()
        return reservation

    def settle(
        self,
        reservation: Reservation,
        input_tokens: int,
        output_tokens: int,
        cost: float | None,
        *,
        replied: bool = True,
        reported_input: int | None = None,
    ) -> None:
        """Replace a reservation with what the call used (`reply_acceptance`: never more than it
        held); a reply (`replied`, not a failed request) also teaches the model's calibration,
        from the input the provider reported (`reported_input`, when it was more than counted:
        how the provider counts what the app estimates) and the output counted (never past the
        max_tokens sent)."""
        self._drop(reservation)
        self._spend(input_tokens, output_tokens, cost)
        if replied:
            self.calibration.learn(
                reservation.model.name,
                reservation.estimate,
                reservation.max_output,
                input_tokens if reported_input is None else reported_input,
                output_tokens,
            )
        self._changed()

    def charge(self, reservation: Reservation) -> None:
        """Settle a call at what it held: it was cancelled in flight, or its reply was not read,
        and the provider may have billed it anyway."""
        if self._drop(reservation):
            cost = reservation.model.cost(reservation.input_tokens, reservation.output_tokens)
            self._spend(reservation.input_tokens, reservation.output_tokens, cost)
            self.held_tokens += reservation.input_tokens + reservation.output_tokens
            self._changed()

    def release(self, reservation: Reservation) -> None:
        """Give a reservation back unused (the call failed before anything was sent)."""
        if self._drop(reservation):
            self._changed()

    def _spend(self, input_tokens: int, output_tokens: int, cost: float | None) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.spent_cost_usd += cost

    def _drop(self, reservation: Reservation) -> bool:
        if self._reserved.pop(reservation.id, None) is None:
            return False
        self.reserved_tokens -= reservation.tokens
        self.reserved_cost_usd = max(0.0, self.reserved_cost_usd - reservation.cost_usd)
        if not self._reserved:
            self.reserved_cost_usd = 0.0  # no float drift once nothing is in flight
        return True

    def _refuse(self, limit: str, detail: str) -> BudgetExceededError:
        self.refusals[limit] += 1
        return BudgetExceededError(limit, detail)

    def check_time(self) -> None:
        """Raise when the run's wall-clock budget is spent."""
        limit = self.budget.timeout_s
        if limit is not None and time.monotonic() - self.started > limit:
            raise self._refuse(TIME_LIMIT, f"time budget of {limit:g} s is spent")

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
