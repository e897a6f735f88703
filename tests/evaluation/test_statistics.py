"""The table's statistics, the total budget's grants and the `auto` threshold suggestion, on
hand-made results."""

from __future__ import annotations

import math

import pytest

from rlm_desktop.evaluation.allowance import Allowance
from rlm_desktop.evaluation.settings import Setting
from rlm_desktop.evaluation.summary import bootstrap_ci, percentile, summarize
from rlm_desktop.evaluation.threshold import suggest
from rlm_desktop.evaluation.trial import TrialResult


def result(
    setting: str, score: float, cost: float = 0.0, length: int = 1000, status: str = "completed"
) -> TrialResult:
    return TrialResult(
        evaluation_id="e", setting=setting, task_id=f"t{score}{cost}{length}", kind="needle",
        length=length, session_id="s", status=status, score=score, cost_usd=cost,
        input_tokens=10, output_tokens=5, wall_s=2.0, sub_calls=3, unpriced=False, answer="",
        gold="",
    )  # fmt: skip


def test_percentile_interpolates_like_numpy() -> None:
    assert percentile([1, 2, 3, 4], 0.5) == 2.5
    assert percentile([10, 20, 30, 40, 50], 0.95) == pytest.approx(48.0)
    assert percentile([7], 0.95) == 7
    assert math.isnan(percentile([], 0.5))


def test_bootstrap_interval_brackets_the_mean_and_is_repeatable() -> None:
    scores = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]
    low, high = bootstrap_ci(scores)
    assert low < 0.7 < high
    assert low >= 0.0
    assert high <= 1.0
    assert bootstrap_ci(scores) == (low, high)
    assert bootstrap_ci([1.0, 1.0]) == (1.0, 1.0)


def test_summary_row_of_one_setting() -> None:
    rows = [result("a", 1.0, 0.01), result("a", 0.5, 0.03), result("a", 0.0, 0.02, status="error")]
    row = summarize("a", rows)
    assert (row.runs, row.failures) == (3, 1)
    assert row.score_mean == pytest.approx(0.5)
    assert row.cost_mean == pytest.approx(0.02)
    assert row.cost_median == pytest.approx(0.02)
    assert row.cost_p95 == pytest.approx(0.029)
    assert (row.wall_mean, row.sub_calls_mean, row.tokens_mean) == (2.0, 3.0, 15.0)


def test_grants_share_the_remainder_and_never_exceed_it() -> None:
    allowance = Allowance(max_cost_usd=1.0)
    grants = [allowance.grant(4, 0.0, 0) for _ in range(4)]
    assert [g.cost_usd for g in grants if g] == [0.25, 0.25, 0.25, 0.25]
    assert allowance.grant(4, 0.0, 0) is None  # everything is promised to runs in flight
    first = grants[0]
    assert first is not None
    allowance.settle(first, 0.05, 100)
    again = allowance.grant(4, 0.0, 0)
    assert again is not None
    assert again.cost_usd == pytest.approx(0.2)
    assert allowance.remaining_usd() == pytest.approx(0.95)


def test_no_grant_when_the_floor_is_more_than_what_is_left() -> None:
    allowance = Allowance(max_cost_usd=0.01, max_tokens=1_000)
    assert allowance.grant(1, 0.02, 10) is None
    assert allowance.grant(1, 0.001, 2_000) is None
    grant = allowance.grant(1, 0.001, 10)
    assert grant is not None
    assert (grant.cost_usd, grant.tokens) == (0.01, 1_000)


def test_threshold_is_the_longest_length_where_direct_still_held() -> None:
    settings = [
        Setting("d", model="m", mode="direct"),
        Setting("r", model="m", mode="rlm"),
        Setting("other", model="x", mode="rlm"),
    ]
    results = [
        result("d", 1.0, length=1_000), result("r", 0.8, length=1_000),
        result("d", 0.9, length=8_000), result("r", 0.9, length=8_000),
        result("d", 0.2, length=32_000), result("r", 0.7, length=32_000),
        result("d", 0.9, length=64_000), result("r", 0.7, length=64_000),
    ]  # fmt: skip
    (suggestion,) = suggest(settings, results)
    assert (suggestion.model, suggestion.threshold) == ("m", 8_000)
    assert "suggested threshold 8,000 tokens" in suggestion.sentence()


def test_threshold_when_one_mode_wins_everywhere() -> None:
    settings = [Setting("d", model="m", mode="direct"), Setting("r", model="m", mode="rlm")]
    rlm_wins = [result("d", 0.1, length=500), result("r", 0.9, length=500)]
    direct_wins = [result("d", 1.0, length=500), result("r", 0.9, length=500)]
    assert suggest(settings, rlm_wins)[0].threshold is None
    assert "use rlm" in suggest(settings, rlm_wins)[0].sentence()
    assert suggest(settings, direct_wins)[0].threshold == 500
    assert "measure longer inputs" in suggest(settings, direct_wins)[0].sentence()


def test_a_setting_without_runs_reads_as_null_in_json() -> None:
    row = summarize("never-ran", []).to_json()
    assert (row["runs"], row["score_mean"], row["score_ci95"], row["cost_p95"]) == (
        0, None, [None, None], None,
    )  # fmt: skip
