"""The evaluation's total budget: one dollar and token allowance shared by all of its runs.

A run starts only with a grant: at most the allowance not yet spent or promised to runs in
flight, and no more than a fair share of what is left (the remainder divided among the runs
that could run at once), so that concurrent runs cannot together pass the total. Each run's own
`Budget` is capped at its grant, and the engine's ledger keeps every run within its cap; when a
run ends, what it did not spend goes back to the pool. A run whose floor (its first call's input,
priced) is more than the grant it could get is not started.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Grant:
    """What one run may spend: `None` where the evaluation has no cap."""

    cost_usd: float | None
    tokens: int | None


class Allowance:
    """The evaluation's caps, what was spent and what runs in flight hold."""

    def __init__(
        self,
        max_cost_usd: float | None = None,
        max_tokens: int | None = None,
        spent_usd: float = 0.0,
        spent_tokens: int = 0,
    ) -> None:
        self.max_cost_usd = max_cost_usd
        self.max_tokens = max_tokens
        self.spent_usd = spent_usd
        self.spent_tokens = spent_tokens
        self._held_usd = 0.0
        self._held_tokens = 0

    def remaining_usd(self) -> float | None:
        """Dollars not yet spent (None: no cap)."""
        return None if self.max_cost_usd is None else max(0.0, self.max_cost_usd - self.spent_usd)

    def remaining_tokens(self) -> int | None:
        """Tokens not yet spent (None: no cap)."""
        return None if self.max_tokens is None else max(0, self.max_tokens - self.spent_tokens)

    def grant(self, sharers: int, floor_usd: float, floor_tokens: int) -> Grant | None:
        """A grant for one run, shared fairly among `sharers` runs, or None when what is left
        cannot cover the run's floor."""
        cost: float | None = None
        tokens: int | None = None
        remaining_usd, remaining_tokens = self.remaining_usd(), self.remaining_tokens()
        if remaining_usd is not None:
            free = remaining_usd - self._held_usd
            cost = min(free, remaining_usd / max(1, sharers))
            if cost <= 0 or cost < floor_usd:
                return None
        if remaining_tokens is not None:
            free_tokens = remaining_tokens - self._held_tokens
            tokens = min(free_tokens, remaining_tokens // max(1, sharers))
            if tokens <= 0 or tokens < floor_tokens:
                return None
        self._held_usd += cost or 0.0
        self._held_tokens += tokens or 0
        return Grant(cost, tokens)

    def settle(self, grant: Grant, cost_usd: float, tokens: int) -> None:
        """Release a grant and count what its run spent."""
        self._held_usd -= grant.cost_usd or 0.0
        self._held_tokens -= grant.tokens or 0
        self.spent_usd += cost_usd
        self.spent_tokens += tokens
