"""What was read to answer, without the model's word for it: the passages of the documents that
the run's sub-calls were given, and whether the answer repeats what each of them replied.

A sub-call's prompt (and what a child RLM call's code printed) is matched to the documents as
coverage matches it (`CoverageIndex.passages`), so a prompt cut from `context[0][1200:5400]`
yields that span. A sub-call is `used` when the answer
repeats its reply: a figure of the reply, or two of its less common words that the question
does not already hold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rlm_desktop.review.health.coverage import merge

if TYPE_CHECKING:  # the window imports `ReadPassage` at start-up, before the store is loaded
    from rlm_desktop.review.health.view import RunView

Passage = tuple[int, int, int]
"""`(document_index, start, end)` of a passage, as `CoverageIndex.passages` finds them."""
MAX_PASSAGES = 200
"""Passages listed per run; a fan-out over thousands of chunks lists its first ones."""
WORDS_SHARED = 2
_WORD = re.compile(r"[^\W_]{5,}")
_FIGURE = re.compile(r"\d[\d.,:]*\d|\d{2,}")  # a range "09:00-09:12" is two figures
_COMMON = frozenset(
    [
        "about",
        "above",
        "after",
        "again",
        "against",
        "among",
        "answer",
        "based",
        "because",
        "before",
        "being",
        "below",
        "between",
        "context",
        "could",
        "document",
        "documents",
        "doesn",
        "during",
        "every",
        "found",
        "further",
        "given",
        "having",
        "information",
        "mentioned",
        "might",
        "never",
        "other",
        "passage",
        "provided",
        "question",
        "quoted",
        "really",
        "relevant",
        "seems",
        "should",
        "since",
        "snippet",
        "still",
        "their",
        "there",
        "these",
        "thing",
        "think",
        "those",
        "though",
        "three",
        "through",
        "under",
        "until",
        "using",
        "where",
        "whether",
        "which",
        "while",
        "would",
        "yours",
        "none",
        "nothing",
        "text",
        "chunk",
        "section",
    ]
)


@dataclass(frozen=True)
class ReadPassage:
    """A passage of a document that a sub-call was given: `documents[document_index][start:end]`."""

    document: str
    document_index: int
    start: int
    end: int
    call_id: str
    used: bool
    """Whether the answer repeats the sub-call's reply."""

    def to_json(self) -> dict[str, Any]:
        """`{"document", "document_index", "start", "end", "call_id", "used"}`."""
        return {
            "document": self.document,
            "document_index": self.document_index,
            "start": self.start,
            "end": self.end,
            "call_id": self.call_id,
            "used": self.used,
        }


def read_to_answer(
    view: RunView,
    passages_by_call: Mapping[str, Sequence[Passage]],
    names: list[str],
    answer: str,
) -> tuple[ReadPassage, ...]:
    """The passages every sub-call that got a reply read (`passages_by_call`, from coverage),
    those whose reply the answer repeats first, each call's passages in document order."""
    root = view.root()
    if root is None or not answer.strip():
        return ()
    question = _terms(str(view.session.get("query") or ""))
    said = _terms(answer)
    passages: list[ReadPassage] = []
    for call in view.calls:
        read = passages_by_call.get(call["id"])
        if call["id"] == root["id"] or not read:
            continue
        used = _repeats(said, _terms(call["response"] or ""), question)
        spans: dict[int, list[tuple[int, int]]] = {}
        for number, start, end in read:
            spans.setdefault(number, []).append((start, end))
        for number, ranges in sorted(spans.items()):
            passages += [
                ReadPassage(names[number], number, start, end, call["id"], used)
                for start, end in merge(ranges)
            ]
    passages.sort(key=lambda passage: not passage.used)
    return tuple(passages[:MAX_PASSAGES])


def _terms(text: str) -> tuple[set[str], set[str]]:
    lowered = text.casefold()
    words = {word for word in _WORD.findall(lowered) if word not in _COMMON}
    return words, set(_FIGURE.findall(lowered))


def _repeats(
    answer: tuple[set[str], set[str]],
    reply: tuple[set[str], set[str]],
    question: tuple[set[str], set[str]],
) -> bool:
    figures = (answer[1] & reply[1]) - question[1]
    words = (answer[0] & reply[0]) - question[0]
    return bool(figures) or len(words) >= WORDS_SHARED
