"""While a run goes: the moments it passes half and four fifths of a cap, and the user's own p90.

Qt-free: the status bar feeds it the run's figures as they change and shows what it returns. Each
mark is reported once per run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlm_desktop import formatting as fmt

MARKS = (0.5, 0.8)
"""Shares of a cap worth a word."""
LIMITS: dict[str, tuple[str, Callable[[Any], str]]] = {
    "cost": ("the dollar cap", fmt.cost),
    "tokens": ("the token cap", fmt.tokens),
    "sub_calls": ("the sub-call cap", lambda value: f"{value:,.0f}"),
    "seconds": ("the time limit", fmt.seconds),
}
"""Each figure's name in a sentence, and how its values are written."""


@dataclass(frozen=True)
class Passed:
    """A mark the run went past: `limit` (a key of LIMITS, or "p90"), `share`, one sentence."""

    limit: str
    share: float
    text: str

    @property
    def serious(self) -> bool:
        """True from four fifths of a cap on (and past the user's p90)."""
        return self.share >= MARKS[-1]


@dataclass
class CapWatch:
    """The caps of one run (None: no cap) and the user's p90 cost per run (None: no history)."""

    caps: dict[str, float | None]
    cost_p90: float | None = None
    _seen: set[tuple[str, float]] = field(default_factory=set)

    def update(self, figures: dict[str, float]) -> list[Passed]:
        """The marks `figures` (same keys as LIMITS) went past since the last update, in order."""
        passed: list[Passed] = []
        for limit, value in figures.items():
            cap = self.caps.get(limit)
            if not cap or limit not in LIMITS:
                continue
            name, shown = LIMITS[limit]
            for mark in MARKS:
                if value >= cap * mark and (limit, mark) not in self._seen:
                    self._seen.add((limit, mark))
                    passed.append(
                        Passed(
                            limit,
                            mark,
                            f"Past {mark:.0%} of {name}: {shown(value)} of {shown(cap)}.",
                        )
                    )
        cost = figures.get("cost", 0.0)
        if self.cost_p90 and cost > self.cost_p90 and ("p90", 1.0) not in self._seen:
            self._seen.add(("p90", 1.0))
            passed.append(
                Passed(
                    "p90",
                    1.0,
                    f"This run has cost {fmt.cost(cost)}, more than 9 in 10 of your runs "
                    f"(p90 {fmt.cost(self.cost_p90)}).",
                )
            )
        return passed


MIN_HISTORY = 10
"""Priced runs needed before "more than 9 in 10 of your runs" means something."""


def cost_p90(costs: list[float]) -> float | None:
    """The user's p90 cost per run from their priced runs; None with too few of them."""
    from rlm_desktop.review.history import percentile

    if len(costs) < MIN_HISTORY:
        return None
    return percentile(sorted(costs), 90)
