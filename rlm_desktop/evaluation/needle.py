"""RULER-style single needle: one "special magic number" sentence at a chosen depth in filler."""

from __future__ import annotations

from rlm_desktop.evaluation.tasks import GoldSpan, Task, count, fill, joined_spans, rng_for, task_id
from rlm_desktop.evaluation.words import ADJECTIVES, NOUNS

FILLER = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."
"""RULER's noise haystack sentence group."""
NEEDLE = "One of the special magic numbers for {key} is: {value}."
QUESTION = (
    "What is the special magic number for {key} mentioned in the provided text? "
    "Answer with the number only."
)
DEPTHS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def needle_task(length: int, seed: int, index: int = 0, depth: float | None = None) -> Task:
    """A haystack of about `length` tokens with one needle at `depth` (0 start, 1 end; by default
    drawn from `DEPTHS`); the answer is the needle's 7-digit value, its gold span the needle's
    sentence (a line of its own)."""
    rng = rng_for("needle", seed, length, index)
    key = f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}"
    value = str(rng.randint(1_000_000, 9_999_999))
    depth = rng.choice(DEPTHS) if depth is None else depth
    needle = NEEDLE.format(key=key, value=value)
    units = fill(max(0, length - count(needle)), lambda: FILLER)
    position = round(depth * len(units))
    units.insert(position, needle)
    text = "\n".join(units)
    start, end = joined_spans(units)[position]
    return Task(
        id=task_id("needle", seed, length, index),
        kind="needle",
        documents=(("haystack.txt", text),),
        question=QUESTION.format(key=key),
        answer=value,
        scoring="exact",
        length=length,
        details={"key": key, "depth": depth},
        gold_spans=(GoldSpan(0, start, end),),
    )
