"""OOLONG-Pairs-style questions: every pair of users that meets a condition on hidden labels,
scored by F1 over pairs."""

from __future__ import annotations

import itertools
from collections import Counter

from rlm_desktop.evaluation.lines import LABELS, Line, labelled_lines, records_task, users
from rlm_desktop.evaluation.tasks import Task, rng_for

USERS = 10
NO_PAIRS = "none"
FORMAT = (
    "List every such pair once as (lower ID, higher ID), one pair per line; answer "
    f"'{NO_PAIRS}' if there is none."
)


def pairs_task(length: int, seed: int, index: int = 0) -> Task:
    """About `length` tokens of labelled lines and an "all pairs of user IDs where both ..."
    question; the gold answer lists the pairs, one `(a, b)` a line."""
    rng = rng_for("pairs", seed, length, index)
    lines = labelled_lines(rng, length, users(rng, USERS))
    first, second = rng.sample(LABELS, 2)
    if rng.random() < 0.5:
        condition = f"both users have at least one instance with label '{first}'"
        qualifies = {u for u, c in user_counts(lines).items() if c[first] >= 1}
    else:
        condition = (
            f"both users have more instances with label '{first}' than with label '{second}'"
        )
        qualifies = {u for u, c in user_counts(lines).items() if c[first] > c[second]}
    found = sorted(itertools.combinations(sorted(qualifies), 2))
    question = f"List all pairs of user IDs where {condition}. {FORMAT}"
    details = {"condition": condition, "pairs": len(found)}
    drawn = (seed, length, index)
    return records_task(
        "pairs", drawn, lines, question, format_pairs(found), scoring="f1", details=details
    )


def user_counts(lines: list[Line]) -> dict[int, Counter[str]]:
    """Label counts per user."""
    counts: dict[int, Counter[str]] = {}
    for line in lines:
        counts.setdefault(line.user, Counter())[line.label] += 1
    return counts


def format_pairs(pairs: list[tuple[int, int]]) -> str:
    """Pairs as the gold answer writes them."""
    return "\n".join(f"({a}, {b})" for a, b in pairs) or NO_PAIRS
