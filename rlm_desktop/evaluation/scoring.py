"""Scorers: an answer against the gold answer, as a number from 0 to 1.

- `exact`: 1 when the answers match after normalising (case, surrounding whitespace, quotes,
  backticks and final punctuation, runs of spaces; a leading "Answer:" is dropped), else 0.
- `numeric` (OOLONG's rule): 0.75 ** |answer - gold|, with the answer's last number read out of
  its text; 0 when it holds no number.
- `f1`: F1 over the items of the two answers: `(a, b)` pairs when the gold answer has any (the
  order inside a pair does not count), otherwise comma- or line-separated items; two empty
  answers score 1.
"""

from __future__ import annotations

import re

from rlm_desktop.evaluation.tasks import Scoring

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
PAIR = re.compile(r"\(?\s*(-?\d+)\s*,\s*(-?\d+)\s*\)?")
EMPTY_WORDS = {"", "none", "no pairs", "[]"}
_PREFIX = re.compile(r"^(?:final\s+)?answer\s*[:\-]\s*", re.IGNORECASE)
_EDGES = " \t\r\n\"'`*.,;:!?"


def normalize(text: str) -> str:
    """An answer as exact match compares it."""
    text = _PREFIX.sub("", text.strip())
    return " ".join(text.strip(_EDGES).casefold().split())


def exact(answer: str, gold: str) -> float:
    """1.0 when the normalised answers are equal, else 0.0."""
    return 1.0 if normalize(answer) == normalize(gold) else 0.0


def last_number(text: str) -> float | None:
    """The last number written in `text` (thousands separators allowed), or None."""
    found = NUMBER.findall(text)
    return float(found[-1].replace(",", "")) if found else None


def numeric(answer: str, gold: str) -> float:
    """0.75 ** |error| (OOLONG), 0.0 when the answer holds no number."""
    value, target = last_number(answer), last_number(gold)
    if value is None or target is None:
        return 0.0
    return float(0.75 ** abs(value - target))


def items(text: str, as_pairs: bool) -> set[tuple[str, ...]]:
    """The items an answer lists: unordered pairs, or normalised separated items."""
    if normalize(text) in EMPTY_WORDS:
        return set()
    if as_pairs:
        return {tuple(sorted((a, b), key=int)) for a, b in PAIR.findall(text)}
    parts = (normalize(part) for part in re.split(r"[,\n;]", text))
    return {(part,) for part in parts if part}


def f1(answer: str, gold: str) -> float:
    """F1 between the answer's items and the gold items."""
    as_pairs = bool(PAIR.search(gold))
    found, wanted = items(answer, as_pairs), items(gold, as_pairs)
    if not found and not wanted:
        return 1.0
    hits = len(found & wanted)
    if hits == 0:
        return 0.0
    precision, recall = hits / len(found), hits / len(wanted)
    return 2 * precision * recall / (precision + recall)


SCORERS = {"exact": exact, "numeric": numeric, "f1": f1}


def score(scoring: Scoring, answer: str, gold: str) -> float:
    """The answer's score under `scoring`."""
    return SCORERS[scoring](answer, gold)
