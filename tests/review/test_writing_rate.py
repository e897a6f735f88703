"""The writing speed the status bar shows: tokens a second over the last few seconds, summed
over the replies streaming at once, and nothing once they stop."""

from __future__ import annotations

import pytest

from rlm_desktop.review.writing_rate import WINDOW_S, WritingRate


def test_one_reply_written_at_twenty_tokens_a_second_reads_twenty() -> None:
    rate = WritingRate()
    for step in range(1, 41):
        rate.note("r1", tokens=step * 2, ts=step * 0.1)
    assert rate.per_second(4.0) == pytest.approx(20, rel=0.1)


def test_replies_streaming_side_by_side_add_up() -> None:
    rate = WritingRate()
    for step in range(1, 41):
        for request in ("r1", "r2", "r3"):
            rate.note(request, tokens=step, ts=step * 0.1)
    assert rate.per_second(4.0) == pytest.approx(30, rel=0.1)


def test_a_resent_request_counts_its_new_reply_from_nothing() -> None:
    rate = WritingRate()
    rate.note("r1", tokens=50, ts=1.0)
    rate.restart("r1")
    rate.note("r1", tokens=5, ts=1.5)
    assert rate.per_second(1.5) == pytest.approx(55 / 1.0)


def test_nothing_is_shown_once_the_writing_has_stopped() -> None:
    rate = WritingRate()
    rate.note("r1", tokens=100, ts=10.0)
    rate.done("r1")
    assert rate.per_second(10.0 + WINDOW_S / 2) is not None
    assert rate.per_second(10.0 + WINDOW_S + 0.1) is None
    assert WritingRate().per_second(0.0) is None
