"""OOLONG-style aggregation: count and compare hidden labels over many lines.

The gold spans are the lines the answer is counted from: those of the asked label (of the
asked user, for `user_count`), of either compared label, or of the most common label."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

from rlm_desktop.evaluation.lines import LABELS, Line, labelled_lines, records_task, users
from rlm_desktop.evaluation.tasks import Scoring, Task, rng_for

USERS = 12
COMPARISONS = ("more common than", "less common than", "same frequency as")
QUESTION_KINDS = ("count", "user_count", "compare", "most_common")


def aggregate_task(length: int, seed: int, index: int = 0) -> Task:
    """About `length` tokens of labelled lines and one counting or comparison question."""
    rng = rng_for("aggregate", seed, length, index)
    lines = labelled_lines(rng, length, users(rng, USERS))
    question, answer, scoring, kind, evidence = ask(rng, lines)
    details = {"question_kind": kind, "lines": len(lines)}
    drawn = (seed, length, index)
    return records_task(
        "aggregate", drawn, lines, question, answer, scoring=scoring, details=details,
        evidence=evidence,
    )  # fmt: skip


Evidence = Callable[[Line], bool]


def ask(rng: random.Random, lines: list[Line]) -> tuple[str, str, Scoring, str, Evidence]:
    """(question, gold answer, scoring, question kind, the lines the answer rests on) over
    `lines`."""
    counts = Counter(line.label for line in lines)
    kind = rng.choice(QUESTION_KINDS)
    top = counts.most_common(2)
    if kind == "most_common" and len(top) > 1 and top[0][1] == top[1][1]:
        kind = "count"  # a tie has no single answer
    if kind == "count":
        label = rng.choice(LABELS)
        question = f"How many data points should be classified as label '{label}'?"
        answer = str(counts[label])
        return f"{question} Answer with a number only.", answer, "numeric", kind, _of(label)
    if kind == "user_count":
        user = rng.choice(lines).user
        label = rng.choice(LABELS)
        mine = sum(1 for line in lines if line.user == user and line.label == label)
        question = f"How many data points from User {user} should be classified as label '{label}'?"
        return (
            f"{question} Answer with a number only.", str(mine), "numeric", kind,
            lambda line: line.user == user and line.label == label,
        )  # fmt: skip
    if kind == "compare":
        first, second = rng.sample(LABELS, 2)
        a, b = counts[first], counts[second]
        relation = COMPARISONS[0] if a > b else COMPARISONS[1] if a < b else COMPARISONS[2]
        question = (
            f"Is label '{first}' more common, less common, or the same frequency as label "
            f"'{second}'? Answer with one of: {', '.join(COMPARISONS)}."
        )
        return question, relation, "exact", kind, lambda line: line.label in (first, second)
    question = "Which label is the most common? Answer with the label only."
    return question, top[0][0], "exact", kind, _of(top[0][0])


def _of(label: str) -> Evidence:
    return lambda line: line.label == label
