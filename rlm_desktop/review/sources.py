"""Checking an answer's sources against the documents, trusting nothing the model said.

Each quote the model gave with `FINAL(..., sources=[...])`, and each passage the answer itself
puts in quotation marks, is looked for in the documents: word for word (`exact`), then with
whitespace, case, quotation marks and dashes made alike (`normalized`), then approximately
(`fuzzy`, rapidfuzz's best-aligned substring, its score kept, and only when every figure in it
is the passage's: "4.3 million" for "4.2 million" is a misquote, not a typo). A quote with an ellipsis ("the
start … the end") is found piece by piece, in order, in one document. A span
`(document_index, start, end)` is taken when it lies inside its document (`span`). Anything else
is `not_found`: the model may have made it up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rlm_desktop.engine.evidence import GivenSource

Match = Literal["exact", "normalized", "fuzzy", "span", "not_found"]
Origin = Literal["sources", "answer"]

FUZZY_MIN_SCORE = 90.0
"""The least rapidfuzz `partial_ratio` (0–100) a quote must reach to count as found: a few
changed characters (a typo, a dropped comma) pass, a paraphrase does not."""
FUZZY_MIN_CHARS = 24
"""Shorter quotes must be found exactly or normalised: a few characters match something
approximately almost anywhere."""
ANSWER_QUOTE_MIN_WORDS = 4
"""Quotation marks in the answer around fewer words are names or terms, not quoted passages."""
MAX_ANSWER_QUOTES = 30
PASSAGE_SHOWN_CHARS = 500
"""A span's passage is shown (as its `quote`) up to this many characters."""

_QUOTE_MARKS = "\"'“”„‟‘’‚‛«»‹›"
_DASHES = "-‐‑‒–—―−"
_SPLIT_ON_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…|\[\.\.\.\]|\[…\])\s*")
_ANSWER_QUOTES = (
    re.compile(r"“([^“”]+)”"),
    re.compile(r"„([^“”„]+)[“”]"),
    re.compile(r"«\s*([^«»]+?)\s*»"),
    re.compile(r'(?<![\w"])"([^"\n]+)"(?![\w"])'),
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_BLOCK_QUOTE = re.compile(r"(?:^[ \t]*>[ \t]?.*(?:\n|$))+", re.MULTILINE)


@dataclass(frozen=True)
class CheckedSource:
    """One source after checking: where in the documents it is, and how well it matched.

    `number` is its marker in the answer card (from 1); `origin` says whether the model gave
    it as a source or wrote it in quotation marks in the answer. For a found source,
    `documents[document_index][start:end]` is the passage; `note` says why one was not found.
    """

    number: int
    quote: str
    origin: Origin
    match: Match
    score: float | None = None
    document: str | None = None
    document_index: int | None = None
    start: int | None = None
    end: int | None = None
    note: str = ""

    @property
    def found(self) -> bool:
        """Whether the passage is in the documents."""
        return self.match != "not_found"

    def to_json(self) -> dict[str, Any]:
        """DESIGN.md's `sources` entry, plus `number`, `origin` and `note`."""
        return {
            "number": self.number,
            "quote": self.quote,
            "origin": self.origin,
            "document": self.document,
            "document_index": self.document_index,
            "start": self.start,
            "end": self.end,
            "match": self.match,
            "score": None if self.score is None else round(self.score, 1),
            "note": self.note,
        }


MATCH_LABELS: dict[str, str] = {
    "exact": "found word for word",
    "normalized": "found with spacing, case or punctuation marks changed",
    "fuzzy": "found approximately",
    "span": "a span inside its document",
    "not_found": "not in the documents",
}
"""Each verification state as a reader is told it (the window, the CLI and the reports)."""


def match_label(source: CheckedSource) -> str:
    """`found approximately (score 96)`, `not in the documents`, ...: how `source` matched."""
    label = MATCH_LABELS[source.match]
    return f"{label} (score {source.score:.0f})" if source.match == "fuzzy" else label


def place_label(source: CheckedSource) -> str:
    """`report.txt, characters 1,204–1,388`, or "" for a source that was not found."""
    if source.document is None or source.start is None or source.end is None:
        return ""
    return f"{source.document}, characters {source.start:,}–{source.end:,}"


@dataclass(frozen=True)
class _Located:
    match: Match
    score: float | None = None
    index: int | None = None
    start: int | None = None
    end: int | None = None


_NOT_FOUND = _Located("not_found")


def check_sources(
    documents: Sequence[tuple[str, str]],
    given: Sequence[GivenSource],
    answer: str,
    question: str = "",
) -> tuple[CheckedSource, ...]:
    """The sources the model gave, then the passages the answer quotes, each checked against
    `documents` (`(name, text)` in `context`'s order). Quotes that repeat the question, or a
    source already given, are not checked twice."""
    finder = _Finder([text for _, text in documents])
    names = [name for name, _ in documents]
    checked: list[CheckedSource] = []
    seen: set[str] = set()
    for source in given:
        number = len(checked) + 1
        if source.span is not None:
            checked.append(_checked_span(number, source.span, documents))
            continue
        quote = str(source.quote)
        seen.add(_plain(quote))
        checked.append(_checked_quote(number, quote, "sources", finder.locate(quote), names))
    asked = _plain(question)
    for quote in quotes_in_answer(answer):
        plain = _plain(quote)
        if plain in seen or (plain and plain in asked):
            continue
        seen.add(plain)
        number = len(checked) + 1
        checked.append(_checked_quote(number, quote, "answer", finder.locate(quote), names))
    return tuple(checked)


def quotes_in_answer(answer: str) -> list[str]:
    """The passages an answer puts in quotation marks or Markdown block quotes, of at least
    `ANSWER_QUOTE_MIN_WORDS` words, in order of appearance."""
    found: list[tuple[int, str]] = []
    for pattern in _ANSWER_QUOTES:
        found += [(m.start(), m.group(1)) for m in pattern.finditer(answer)]
    for block in _BLOCK_QUOTE.finditer(answer):
        lines = [re.sub(r"^[ \t]*>[ \t]?", "", line) for line in block.group(0).splitlines()]
        found.append((block.start(), " ".join(line.strip() for line in lines)))
    quotes = []
    for _, quote in sorted(found):
        quote = quote.strip().strip(_QUOTE_MARKS).strip()
        if len(quote.split()) >= ANSWER_QUOTE_MIN_WORDS:
            quotes.append(quote)
    return quotes[:MAX_ANSWER_QUOTES]


def _checked_quote(
    number: int, quote: str, origin: Origin, located: _Located, names: list[str]
) -> CheckedSource:
    if located.index is None:
        note = "not in the documents: the model may have made it up"
        if located.score:
            note += f" (the closest passage scores {located.score:.0f} of 100)"
        return CheckedSource(number, quote, origin, "not_found", located.score, note=note)
    return CheckedSource(
        number,
        quote,
        origin,
        located.match,
        located.score,
        names[located.index],
        located.index,
        located.start,
        located.end,
    )


def _checked_span(
    number: int, span: tuple[int, int, int], documents: Sequence[tuple[str, str]]
) -> CheckedSource:
    index, start, end = span
    shown = f"({index}, {start}, {end})"
    if not 0 <= index < len(documents):
        return CheckedSource(
            number, shown, "sources", "not_found",
            note=f"span {shown} names document {index}, but the run has {len(documents)}",
        )  # fmt: skip
    name, text = documents[index]
    if not 0 <= start < end <= len(text):
        return CheckedSource(
            number, shown, "sources", "not_found",
            note=f"span {shown} is outside {name} ({len(text):,} characters)",
        )  # fmt: skip
    passage = text[start:end]
    if len(passage) > PASSAGE_SHOWN_CHARS:
        passage = passage[: PASSAGE_SHOWN_CHARS - 1].rstrip() + "…"
    return CheckedSource(number, passage, "sources", "span", None, name, index, start, end)


class _Finder:
    """Looks quotes up in the documents, from the strictest match to the loosest."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self._lowered: dict[int, str] = {}

    def locate(self, quote: str) -> _Located:
        """Where `quote` is, the ellipses in it standing for text left out."""
        pieces = [piece for piece in _SPLIT_ON_ELLIPSIS.split(quote.strip()) if piece.strip()]
        if len(pieces) <= 1:
            return self._whole(quote.strip())
        return self._in_pieces(pieces)

    def _whole(self, quote: str, within: int | None = None, after: int = 0) -> _Located:
        if not quote:
            return _NOT_FOUND
        numbers = range(len(self.texts)) if within is None else (within,)
        for number in numbers:
            start = self.texts[number].find(quote, after if number == within else 0)
            if start >= 0:
                return _Located("exact", 100.0, number, start, start + len(quote))
        pattern = _loose_pattern(quote)
        for number in numbers:
            found = pattern.search(self.texts[number], after if number == within else 0)
            if found:
                return _Located("normalized", 100.0, number, found.start(), found.end())
        if len(quote) < FUZZY_MIN_CHARS:
            return _NOT_FOUND
        return self._fuzzy(quote, numbers, after if within is not None else 0)

    def _fuzzy(self, quote: str, numbers: Sequence[int], after: int) -> _Located:
        from rapidfuzz import fuzz

        best = _NOT_FOUND
        best_score = 0.0
        needle = quote.lower() if len(quote.lower()) == len(quote) else quote
        for number in numbers:
            text = self._comparable(number, lowered=needle is not quote)
            if len(text) - after < len(needle):
                continue
            aligned = fuzz.partial_ratio_alignment(needle, text[after:] if after else text)
            if aligned is None or aligned.score <= best_score:
                continue
            best_score = aligned.score
            start, end = after + aligned.dest_start, after + aligned.dest_end
            passage = self.texts[number][start:end]
            if aligned.score >= FUZZY_MIN_SCORE and _numbers(passage) == _numbers(quote):
                best = _Located("fuzzy", aligned.score, number, start, end)
        return best if best.index is not None else _Located("not_found", best_score or None)

    def _comparable(self, number: int, *, lowered: bool) -> str:
        """The document's text, lower-cased once when that keeps every offset where it was."""
        text = self.texts[number]
        if not lowered:
            return text
        if number not in self._lowered:
            low = text.lower()
            self._lowered[number] = low if len(low) == len(text) else text
        return self._lowered[number]

    def _in_pieces(self, pieces: list[str]) -> _Located:
        """Every piece found, in order, in one document: the passage runs from the first to the
        last, and matches as loosely as its loosest piece."""
        first = self._whole(pieces[0])
        if first.index is None:
            return first
        located = [first]
        for piece in pieces[1:]:
            found = self._whole(piece, within=first.index, after=int(located[-1].end or 0))
            if found.index is None:
                return _Located("not_found", found.score)
            located.append(found)
        order: list[Match] = ["exact", "normalized", "fuzzy"]
        loosest = max((piece.match for piece in located), key=order.index)
        score = min(piece.score or 0.0 for piece in located)
        return _Located(loosest, score, first.index, first.start, located[-1].end)


def _loose_pattern(quote: str) -> re.Pattern[str]:
    """A pattern for `quote` with any run of whitespace, any case, any quotation mark and any
    dash where it has one."""
    words = [
        "".join(
            f"[{re.escape(_QUOTE_MARKS)}]" if char in _QUOTE_MARKS
            else f"[{re.escape(_DASHES)}]" if char in _DASHES
            else re.escape(char)
            for char in word
        )
        for word in quote.split()
    ]  # fmt: skip
    return re.compile(r"\s+".join(words), re.IGNORECASE)


def _numbers(text: str) -> list[str]:
    """The figures in `text`: a near match that changes one is a misquote, not a typo."""
    return _NUMBER.findall(text)


def _plain(text: str) -> str:
    return " ".join(text.casefold().split()).strip(_QUOTE_MARKS + " .,;:")
