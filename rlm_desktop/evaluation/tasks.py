"""A task with a known answer, and how a generated task is sized to a length in tokens."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from rlm_desktop.engine.config import DEFAULT_MODEL
from rlm_desktop.engine.encodings import encoded_length, tokenizer_for

Scoring = Literal["exact", "numeric", "f1"]
SCORINGS: tuple[Scoring, ...] = ("exact", "numeric", "f1")
COUNTING_MODEL = DEFAULT_MODEL
"""Lengths are counted in this model's tokens (the app's default model), whatever model runs."""
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class GoldSpan:
    """Where a task planted what its answer rests on: `[start, end)` character offsets in
    document `document_index` (the needle's sentence, a relevant line, a definition)."""

    document_index: int
    start: int
    end: int

    def text(self, documents: tuple[tuple[str, str], ...]) -> str:
        """The passage itself."""
        return documents[self.document_index][1][self.start : self.end]


@dataclass(frozen=True)
class Task:
    """Documents, a question about them and the gold answer, with the scoring that applies."""

    id: str
    kind: str
    documents: tuple[tuple[str, str], ...]
    """(name, text) of each document, in order."""
    question: str
    answer: str
    scoring: Scoring
    length: int
    """The input's length in `COUNTING_MODEL`'s tokens: the length a generator was asked for
    (its documents hold that many, give or take one line), or a user's task's measured length."""
    details: dict[str, Any] = field(default_factory=dict, compare=False)
    """What the generator chose (needle depth, question type, ...), for the reader of a result."""
    gold_spans: tuple[GoldSpan, ...] = field(default=(), compare=False)
    """Every passage the answer rests on, for scoring the answer's sources; none where the
    location is not known (OOLONG-Pairs' many lines, a user's own tasks)."""


def count(text: str) -> int:
    """Tokens of `text` as task lengths count them."""
    encoding, _own = tokenizer_for(COUNTING_MODEL)
    if encoding is None:
        return max(1, len(text) // CHARS_PER_TOKEN)
    return encoded_length(encoding, text)


def fill(target_tokens: int, make_unit: Callable[[], str]) -> list[str]:
    """Units (lines, paragraphs) from `make_unit` until, joined by newlines, they hold
    `target_tokens` tokens (a few more at most: one unit's worth).

    Units are counted one by one first, then the joined text is measured and topped up: tokens
    can merge across a newline, so the sum of the parts overestimates the whole.
    """
    units: list[str] = []
    total = 0
    while total < target_tokens:
        units.append(make_unit())
        total += count(units[-1]) + 1
    while units and (whole := count("\n".join(units))) < target_tokens:
        missing = target_tokens - whole
        per_unit = max(1.0, whole / len(units))
        units.extend(make_unit() for _ in range(max(1, int(missing / per_unit))))
    return units


def joined_spans(units: list[str], separator: str = "\n") -> list[tuple[int, int]]:
    """The `[start, end)` offsets of each of `units` in `separator.join(units)`."""
    spans = []
    offset = 0
    for unit in units:
        spans.append((offset, offset + len(unit)))
        offset += len(unit) + len(separator)
    return spans


def rng_for(kind: str, seed: int, length: int, index: int) -> random.Random:
    """The random stream of one task: the same inputs always give the same task."""
    return random.Random(f"{kind}:{seed}:{length}:{index}")


def task_id(kind: str, seed: int, length: int, index: int) -> str:
    """A readable, stable id, e.g. `needle-4000-s1-2`."""
    return f"{kind}-{length}-s{seed}-{index}"
