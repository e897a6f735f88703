"""The marks a live run passes: half and four fifths of each cap, and the user's own p90, once each."""

from __future__ import annotations

from rlm_desktop.review.cap_watch import CapWatch, cost_p90


def test_each_mark_is_said_once_as_the_run_passes_it() -> None:
    watch = CapWatch({"cost": 1.0, "tokens": None, "sub_calls": 10, "seconds": 60})
    assert watch.update({"cost": 0.2, "tokens": 5_000, "sub_calls": 2, "seconds": 5}) == []
    passed = watch.update({"cost": 0.55, "tokens": 9_000, "sub_calls": 9, "seconds": 10})
    assert [(p.limit, p.share) for p in passed] == [
        ("cost", 0.5),
        ("sub_calls", 0.5),
        ("sub_calls", 0.8),
    ]
    assert passed[0].text == "Past 50% of the dollar cap: $0.550 of $1.00."
    assert passed[2].text == "Past 80% of the sub-call cap: 9 of 10."
    assert [p.serious for p in passed] == [False, False, True]
    assert watch.update({"cost": 0.6, "tokens": 9_000, "sub_calls": 10, "seconds": 10}) == []
    late = watch.update({"cost": 0.6, "tokens": 9_000, "sub_calls": 10, "seconds": 50})
    assert [(p.limit, p.share) for p in late] == [("seconds", 0.5), ("seconds", 0.8)]


def test_a_run_costlier_than_nine_in_ten_of_the_users_runs_is_said_once() -> None:
    history = [0.01 * n for n in range(1, 21)]  # $0.01 … $0.20
    p90 = cost_p90(history)
    assert p90 is not None
    assert 0.18 <= p90 <= 0.19
    watch = CapWatch({"cost": None}, p90)
    assert watch.update({"cost": 0.15}) == []
    (passed,) = watch.update({"cost": 0.25})
    assert passed.limit == "p90"
    assert "more than 9 in 10 of your runs" in passed.text
    assert watch.update({"cost": 0.30}) == []


def test_too_little_history_gives_no_p90() -> None:
    assert cost_p90([0.1] * 9) is None
