"""Results per setting: score with a 95% interval, cost spread, time, sub-calls, failures.

The interval is a percentile bootstrap (2,000 resamples of the runs' scores, seeded so the same
results always give the same interval): it needs no assumption about the scores' distribution,
which for 0/1 scores near 0 or 1 a t-interval gets wrong. With one run it is that run's score.

How honestly a setting cites (`source_scores`): `source_gold_share` is the mean source score
over its `source_gold_runs` answers to tasks with a known gold location (null when there are
none: not applicable, never 0); `not_found_share` is the share of all its answers' checked
sources and quoted passages (`sources_checked`) that are not in the documents
(`sources_not_found`; null when none were checked).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rlm_desktop.evaluation.trial import TrialResult

RESAMPLES = 2_000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class SettingSummary:
    """One row of the results table (the `eval --json` fields of DESIGN.md, plus a few)."""

    name: str
    runs: int
    score_mean: float
    score_ci95: tuple[float, float]
    cost_mean: float
    cost_median: float
    cost_p95: float
    wall_mean: float
    sub_calls_mean: float
    failures: int
    unpriced: bool
    tokens_mean: float
    source_gold_share: float
    source_gold_runs: int
    not_found_share: float
    sources_checked: int
    sources_not_found: int

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready row (a figure of a setting without runs is null, not NaN)."""
        data = {k: _finite(v) for k, v in asdict(self).items()}
        data["score_ci95"] = [_finite(v) for v in self.score_ci95]
        return data


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def percentile(values: Sequence[float], share: float) -> float:
    """The `share` quantile, interpolating between neighbours (numpy's default method)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    position = share * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def bootstrap_ci(scores: Sequence[float], seed: int = 0) -> tuple[float, float]:
    """The 95% percentile-bootstrap interval of the mean of `scores`."""
    if not scores:
        return (math.nan, math.nan)
    if len(set(scores)) == 1:
        return (scores[0], scores[0])
    rng = random.Random(seed)
    n = len(scores)
    means = [sum(rng.choices(scores, k=n)) / n for _ in range(RESAMPLES)]
    tail = (1 - CONFIDENCE) / 2
    return (percentile(means, tail), percentile(means, 1 - tail))


def summarize(name: str, results: Sequence[TrialResult]) -> SettingSummary:
    """The table row of one setting's results."""
    scores = [r.score for r in results]
    costs = [r.cost_usd for r in results]
    cited = [r.source_score for r in results if r.source_score is not None]
    checked = sum(r.sources_checked for r in results)
    not_found = sum(r.sources_not_found for r in results)

    def mean(values: Sequence[float]) -> float:
        return statistics.fmean(values) if values else math.nan

    return SettingSummary(
        name=name,
        runs=len(results),
        score_mean=mean(scores),
        score_ci95=bootstrap_ci(scores),
        cost_mean=mean(costs),
        cost_median=statistics.median(costs) if costs else math.nan,
        cost_p95=percentile(costs, 0.95),
        wall_mean=mean([r.wall_s for r in results]),
        sub_calls_mean=mean([float(r.sub_calls) for r in results]),
        failures=sum(1 for r in results if r.failed),
        unpriced=any(r.unpriced for r in results),
        tokens_mean=mean([float(r.tokens) for r in results]),
        source_gold_share=mean(cited),
        source_gold_runs=len(cited),
        not_found_share=not_found / checked if checked else math.nan,
        sources_checked=checked,
        sources_not_found=not_found,
    )


def summarize_all(
    setting_names: Sequence[str], results: Sequence[TrialResult]
) -> list[SettingSummary]:
    """One row per setting, in the settings' order."""
    return [summarize(name, [r for r in results if r.setting == name]) for name in setting_names]
