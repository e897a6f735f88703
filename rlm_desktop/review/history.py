"""The history of all saved runs, with no Qt: how cost, wall time, tokens and sub-calls are
spread (median, p90, p99, max and a histogram), what each model, depth setting and profile
cost or took, and which runs sit in the tail.

`load_history(store, HistoryFilter(...))` reads through `store.history_queries`; `History` is
plain data that the dashboard draws.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlm_desktop.store.history_queries import (
    FilterChoices,
    HistoryFilter,
    filter_choices,
    history_rows,
)

if TYPE_CHECKING:
    from rlm_desktop.store.store import Store

__all__ = [
    "METRICS",
    "RESOLUTION",
    "Distribution",
    "FilterChoices",
    "Group",
    "History",
    "HistoryFilter",
    "RunSummary",
    "histogram",
    "load_history",
    "percentile",
]

MAX_BINS = 40
TAIL_QUANTILE = 90.0


@dataclass(frozen=True)
class RunSummary:
    """One saved run as the history sees it."""

    id: str
    query: str
    status: str
    model: str
    profile: str
    max_depth: int | None
    """The run's depth setting (`max_depth` of its budget)."""
    cost_usd: float | None
    """The run's cost when every call of it had a price; None otherwise."""
    wall_s: float | None
    sub_calls: int
    started_at: float | None
    tokens: int = 0
    """Input and output tokens of all the run's calls."""

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RunSummary:
        """A summary from a `history_queries.history_rows` row."""
        priced = row["cost_usd"] is not None and not row["unpriced"]
        return cls(
            id=row["id"],
            query=row["query"] or "",
            status=row["status"],
            model=row["model"] or "",
            profile=row["profile"] or "",
            max_depth=row["max_depth"],
            cost_usd=float(row["cost_usd"]) if priced else None,
            wall_s=row["wall_s"],
            sub_calls=int(row["sub_calls"]),
            started_at=row["started_at"],
            tokens=int(row.get("input_tokens") or 0) + int(row.get("output_tokens") or 0),
        )


METRICS: dict[str, Callable[[RunSummary], float | None]] = {
    "cost_usd": lambda run: run.cost_usd,
    "wall_s": lambda run: run.wall_s,
    "tokens": lambda run: float(run.tokens),
    "sub_calls": lambda run: float(run.sub_calls),
}
"""The measures whose spread the history shows, by name: cost per run (priced runs only),
wall time (finished runs only), tokens (in and out) and sub-calls."""
RESOLUTION = {"cost_usd": 0.001, "wall_s": 0.01, "tokens": 1.0, "sub_calls": 1.0}
"""The least width of a histogram's bar, per measure: runs that all took the same value (every
run of a local model cost $0) make one bar of this width, not of a billionth of a unit."""


def percentile(ordered: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0-100) of ascending `ordered`, interpolating linearly between
    the closest ranks (the "inclusive" definition: the 0th is the minimum, the 100th the max)."""
    if not ordered:
        raise ValueError("no values")
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def histogram(
    ordered: Sequence[float], bins: int = 0, least: float = 1e-9
) -> tuple[list[float], list[int]]:
    """Equal-width bins over ascending `ordered`: `(edges, counts)` with one more edge than
    counts; `bins` 0 picks about the square root of the number of values. Values all the same
    make one bar around them, a tenth of the value wide and at least `least`."""
    if not ordered:
        return [], []
    low, high = ordered[0], ordered[-1]
    if high == low:  # centred on the value, so its marks sit in the bar's middle
        half = max(abs(low) / 10, least) / 2
        return [low - half, low + half], [len(ordered)]
    count = bins or min(MAX_BINS, max(1, math.ceil(math.sqrt(len(ordered)))))
    width = (high - low) / count
    edges = [low + width * i for i in range(count + 1)]
    counts = [0] * count
    for value in ordered:
        counts[min(count - 1, int((value - low) / width))] += 1
    return edges, counts


@dataclass(frozen=True)
class Distribution:
    """How one measure is spread over the runs that have it."""

    metric: str
    values: list[float]
    """Ascending."""
    median: float
    p90: float
    p99: float
    max: float
    edges: list[float]
    counts: list[int]

    @classmethod
    def of(cls, metric: str, values: list[float]) -> Distribution | None:
        """The distribution of `values` (None when there are none)."""
        if not values:
            return None
        ordered = sorted(values)
        edges, counts = histogram(ordered, least=RESOLUTION.get(metric, 1e-9))
        return cls(
            metric=metric,
            values=ordered,
            median=percentile(ordered, 50),
            p90=percentile(ordered, 90),
            p99=percentile(ordered, 99),
            max=ordered[-1],
            edges=edges,
            counts=counts,
        )

    def marks(self) -> list[tuple[str, float]]:
        """The figures a plot marks: median, p90, p99 and max."""
        return [("median", self.median), ("p90", self.p90), ("p99", self.p99), ("max", self.max)]


@dataclass(frozen=True)
class Group:
    """The runs that share a model, a depth setting or a profile, and one measure over them."""

    key: str
    runs: int
    measured_runs: int
    """The runs that have the measure (for cost, the priced ones)."""
    total: float
    median: float | None


def _groups(runs: list[RunSummary], key: Callable[[RunSummary], str], metric: str) -> list[Group]:
    measure = METRICS[metric]
    grouped: dict[str, list[RunSummary]] = {}
    for run in runs:
        grouped.setdefault(key(run), []).append(run)
    result = []
    for name, members in grouped.items():
        values = sorted(v for v in (measure(run) for run in members) if v is not None)
        result.append(
            Group(
                key=name,
                runs=len(members),
                measured_runs=len(values),
                total=sum(values),
                median=percentile(values, 50) if values else None,
            )
        )
    return sorted(result, key=lambda group: (-group.total, group.key))


@dataclass
class History:
    """Every run a filter lets through, and what the dashboard shows about them."""

    runs: list[RunSummary]
    choices: FilterChoices
    distributions: dict[str, Distribution | None] = field(init=False)

    def __post_init__(self) -> None:
        self.distributions = {
            name: Distribution.of(
                name, [v for v in (measure(run) for run in self.runs) if v is not None]
            )
            for name, measure in METRICS.items()
        }

    @property
    def unpriced_runs(self) -> int:
        """Runs left out of the cost distribution: some of their calls had no price."""
        return sum(1 for run in self.runs if run.cost_usd is None)

    @property
    def costs_anything(self) -> bool:
        """True when some run here cost more than $0 (every run of a local model costs $0, and
        an unpriced run has no cost: such a history reads in tokens and time)."""
        return any(run.cost_usd for run in self.runs)

    def by_model(self, metric: str = "cost_usd") -> list[Group]:
        """`metric` per (root) model, the largest total first."""
        return _groups(self.runs, lambda run: run.model or "—", metric)

    def by_depth(self, metric: str = "cost_usd") -> list[Group]:
        """`metric` per depth setting (`max_depth`), the largest total first."""
        return _groups(
            self.runs, lambda run: "—" if run.max_depth is None else str(run.max_depth), metric
        )

    def by_profile(self, metric: str = "cost_usd") -> list[Group]:
        """`metric` per prompt profile, the largest total first."""
        return _groups(self.runs, lambda run: run.profile or "—", metric)

    def tail(self, metric: str, limit: int = 50) -> list[RunSummary]:
        """The runs at or above the p90 of `metric`, largest first."""
        spread = self.distributions[metric]
        if spread is None:
            return []
        measure = METRICS[metric]
        found = [
            run for run in self.runs if (value := measure(run)) is not None and value >= spread.p90
        ]
        found.sort(key=lambda run: measure(run) or 0.0, reverse=True)
        return found[:limit]


def load_history(store: Store, only: HistoryFilter | None = None) -> History:
    """The history of the saved runs that `only` lets through (all of them by default)."""
    with store.lock:
        conn = store.db.conn
        found = history_rows(conn, only or HistoryFilter())
        choices = filter_choices(conn)
    return History([RunSummary.from_row(row) for row in found], choices)
