"""The scorers give the documented values on hand-made answers."""

from __future__ import annotations

import pytest

from rlm_desktop.evaluation.scoring import exact, f1, numeric, score


@pytest.mark.parametrize(
    ("answer", "gold", "expected"),
    [
        ("4821337", "4821337", 1.0),
        ("  Answer: `4821337`. ", "4821337", 1.0),
        ('"Location"', "location", 1.0),
        ("more   common than", "more common than", 1.0),
        ("4821338", "4821337", 0.0),
        ("The number is 4821337", "4821337", 0.0),
        ("", "x", 0.0),
    ],
)
def test_exact(answer: str, gold: str, expected: float) -> None:
    assert exact(answer, gold) == expected


@pytest.mark.parametrize(
    ("answer", "gold", "expected"),
    [
        ("12", "12", 1.0),
        ("13", "12", 0.75),
        ("10", "12", 0.5625),
        ("There are 1,204 of them.", "1204", 1.0),
        ("between 3 and 15", "12", 0.421875),  # the last number counts
        ("no idea", "12", 0.0),
    ],
)
def test_numeric_is_three_quarters_to_the_error(answer: str, gold: str, expected: float) -> None:
    assert numeric(answer, gold) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("answer", "gold", "expected"),
    [
        ("(1, 2)\n(3, 4)", "(1, 2)\n(3, 4)", 1.0),
        ("(2, 1), (4,3)", "(1, 2)\n(3, 4)", 1.0),  # order inside a pair does not count
        ("(1, 2)", "(1, 2)\n(3, 4)", 2 / 3),  # precision 1, recall 1/2
        ("(1, 2)\n(5, 6)", "(1, 2)\n(3, 4)", 0.5),
        ("(5, 6)", "(1, 2)", 0.0),
        ("none", "none", 1.0),
        ("(1, 2)", "none", 0.0),
        ("apple, pear", "pear, apple, plum", 0.8),
    ],
)
def test_f1_over_items(answer: str, gold: str, expected: float) -> None:
    assert f1(answer, gold) == pytest.approx(expected)


def test_score_dispatches_on_the_scoring_kind() -> None:
    assert score("numeric", "11", "12") == 0.75
    assert score("exact", "11", "12") == 0.0
    assert score("f1", "(1, 2)", "(1, 2)") == 1.0
