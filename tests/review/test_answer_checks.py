"""What counts as a brittle answer, and what does not (no false alarms on plain answers)."""

from __future__ import annotations

import pytest

from rlm_desktop.review.health.answers import answer_problem

CODE = "total = 12\nfor row in rows:\n    total += 1\n"


@pytest.mark.parametrize(
    ("answer", "source", "rule"),
    [
        ("", "FINAL", "empty"),
        ("   ", "answer", "empty"),
        ("Your answer", "FINAL", "placeholder"),
        ("<final answer here>", "FINAL", "placeholder"),
        ("N/A", "FINAL", "placeholder"),
        ("total", "FINAL", "variable_name"),
        ("result", "FINAL", "variable_name"),
        ("print(total)", "FINAL", "code"),
        ("```python\nx = 1\n```", "FINAL", "code"),
        ("sorted(counts)[0]", "FINAL", "code"),
        ("['a', 'b']", "FINAL_VAR", "non_text_value"),
        ("{'north': 3}", "FINAL_VAR", "non_text_value"),
        ("<Report object at 0x7f00aa>", "FINAL_VAR", "non_text_value"),
        ("word " * 5000, "FINAL_VAR", "huge_value"),
    ],
)
def test_non_answers_are_named(answer: str, source: str, rule: str) -> None:
    problem = answer_problem(answer, source, CODE)
    assert problem is not None
    assert problem[0] == rule


@pytest.mark.parametrize(
    "answer",
    [
        "42",
        "Paris",
        "Apple (AAPL) reported the highest revenue.",
        "The warehouse holds 120,345 crates.",
        "Answer: 12 crates in sector 3.",
        "[1, 2, 3]",
        "row",
    ],
)
def test_plain_answers_pass(answer: str) -> None:
    assert answer_problem(answer, "FINAL", "x = 1\n") is None
