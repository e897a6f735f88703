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

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rlm_desktop.engine.sandbox.given_sources import GivenSource
from rlm_desktop.review.health.coverage import merge
from rlm_desktop.review.health.document_parts import document_parts

Match = Literal["exact", "normalized", "fuzzy", "span", "not_found"]
_LOOSENESS: tuple[Match, ...] = ("exact", "normalized", "fuzzy", "not_found")
"""A quote's matches from the strictest to the loosest."""
Origin = Literal["sources", "answer"]

FUZZY_MIN_SCORE = 90.0
"""The least rapidfuzz `partial_ratio` (0–100) a quote must reach to count as found: a few
changed characters (a typo, a dropped comma) pass, a paraphrase does not."""
FUZZY_MIN_CHARS = 24
"""Shorter quotes must be found exactly or normalised: a few characters match something
approximately almost anywhere."""
FULL_SCAN_WORK = 50_000_000
"""A quote is aligned with the whole of a document when their lengths multiplied stay under
this (some 50 ms); otherwise only around the places its pieces occur (`_windows_around_pieces`)."""
SHINGLE = 12
PIECES = 8
HITS_PER_PIECE = 4
MAX_WINDOWS = 64
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
_SPACE = re.compile(r"\s+")
_LONG_SPACE = re.compile(r"\s{2,}")
_FOLD = str.maketrans({**dict.fromkeys(_QUOTE_MARKS, "'"), **dict.fromkeys(_DASHES, "-")})
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|`")
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
    return characters(source.document, source.start, source.end)


def characters(document: str, start: int, end: int) -> str:
    """`report.txt, characters 1,204–1,388`: where a passage lies, as readers are told."""
    return f"{document}, characters {start:,}–{end:,}"


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
    parts = document_parts(documents)
    finder, names = _Finder(parts.texts), parts.names
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
        checked.append(_checked_quote(number, quote, "answer", _in_answer(finder, quote), names))
    return tuple(checked)


def _in_answer(finder: _Finder, quote: str) -> _Located:
    """A quote the answer wrote, looked up as written and, when that does not find it as it
    is, without the Markdown emphasis the answer may have added (`**2.4 million**`)."""
    located = finder.locate(quote)
    plain = _EMPHASIS.sub("", quote)
    if located.match in ("exact", "normalized") or plain == quote:
        return located
    bare = finder.locate(plain)
    return bare if _LOOSENESS.index(bare.match) < _LOOSENESS.index(located.match) else located


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

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts
        self._alike: dict[int, _Normalised] = {}

    def _normalised(self, number: int) -> _Normalised:
        if number not in self._alike:
            self._alike[number] = _Normalised(self.texts[number])
        return self._alike[number]

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
        for number in numbers:
            span = self._normalised(number).find(quote, after if number == within else 0)
            if span is not None:
                return _Located("normalized", 100.0, number, *span)
        if len(quote) < FUZZY_MIN_CHARS:
            return _NOT_FOUND
        return self._fuzzy(quote, numbers, after if within is not None else 0)

    def _fuzzy(self, quote: str, numbers: Sequence[int], after: int) -> _Located:
        """The best approximate match over `FUZZY_MIN_SCORE` whose figures are the quote's.

        rapidfuzz aligns a quote with a whole document in time that grows with the document's
        length times the quote's, so past `FULL_SCAN_WORK` a quote is aligned only around the
        places where one of `PIECES` pieces of `SHINGLE` characters spread over it occurs word
        for word: a quote within a few edits of a passage keeps some of them intact.
        """
        from rapidfuzz import fuzz

        needle = _alike_quote(quote)
        best, best_score = _NOT_FOUND, 0.0
        for number in numbers:
            alike = self._normalised(number)
            text, begin = alike.text, alike.normalised(after)
            if len(text) - begin < len(needle):
                continue
            if (len(text) - begin) * len(needle) <= FULL_SCAN_WORK:
                windows = [(begin, len(text))]
            else:
                windows = _windows_around_pieces(needle, text, begin)
            for low, high in windows:
                aligned = fuzz.partial_ratio_alignment(needle, text[low:high])
                if aligned is None or aligned.score <= best_score:
                    continue
                best_score = aligned.score
                start = alike.original(low + aligned.dest_start)
                end = alike.original(low + aligned.dest_end - 1) + 1
                passage = self.texts[number][start:end]
                if aligned.score >= FUZZY_MIN_SCORE and _numbers(passage) == _numbers(quote):
                    best = _Located("fuzzy", aligned.score, number, start, end)
        return best if best.index is not None else _Located("not_found", best_score or None)

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
        loosest = max((piece.match for piece in located), key=_LOOSENESS.index)
        score = min(piece.score or 0.0 for piece in located)
        return _Located(loosest, score, first.index, first.start, located[-1].end)


class _Normalised:
    """A text with every run of whitespace made one space, quotation marks and dashes made one
    of each, and (when that keeps its length) lower-cased, with the way back to its offsets.

    Plain string search over it is linear, where a pattern allowing any whitespace between the
    words of a long quote could be made to backtrack for minutes by a document built for it.
    """

    def __init__(self, text: str) -> None:
        runs = [m.span() for m in _LONG_SPACE.finditer(text)]
        self.text = _alike(_SPACE.sub(" ", text))
        self._starts: list[int] = []  # where each shortened run begins, in the normalised text
        self._shifts: list[int] = []  # how far the text after it moved
        shift = 0
        for start, end in runs:
            self._starts.append(start - shift + 1)
            shift += end - start - 1
            self._shifts.append(shift)

    def find(self, quote: str, after: int = 0) -> tuple[int, int] | None:
        """The `[start, end)` of `quote` (normalised alike) in the original text, if there."""
        needle = _alike_quote(quote)
        if not needle:
            return None
        start = self.text.find(needle, self.normalised(after))
        if start < 0:
            return None
        return self.original(start), self.original(start + len(needle) - 1) + 1

    def original(self, position: int) -> int:
        """The offset in the original text of the normalised text's `position`."""
        run = bisect.bisect_right(self._starts, position)
        return position + (self._shifts[run - 1] if run else 0)

    def normalised(self, position: int) -> int:
        """The normalised offset of the original text's `position` (the start of its run)."""
        low, high = 0, len(self.text)
        while low < high:
            middle = (low + high) // 2
            if self.original(middle) < position:
                low = middle + 1
            else:
                high = middle
        return low


def _alike_quote(quote: str) -> str:
    """`quote` as `_Normalised` holds its text: one space between words, made alike."""
    return _alike(" ".join(quote.split()))


def _alike(text: str) -> str:
    folded = text.translate(_FOLD)
    lowered = folded.lower()
    return lowered if len(lowered) == len(folded) else folded


def _windows_around_pieces(needle: str, text: str, after: int) -> list[tuple[int, int]]:
    """Stretches of `text` (from `after`) where a quote as long as `needle` could lie, found by
    the pieces of it that occur word for word, merged where they overlap."""
    step = max(SHINGLE, len(needle) // PIECES)
    margin = len(needle) // 4
    found: list[tuple[int, int]] = []
    for offset in range(0, len(needle) - SHINGLE + 1, step):
        piece, position = needle[offset : offset + SHINGLE], after
        for _ in range(HITS_PER_PIECE):
            position = text.find(piece, position)
            if position < 0:
                break
            start = max(after, position - offset - margin)
            found.append((start, position - offset + len(needle) + margin))
            position += 1
    return merge(found)[:MAX_WINDOWS]


def _numbers(text: str) -> list[str]:
    """The figures in `text`: a near match that changes one is a misquote, not a typo."""
    return _NUMBER.findall(text)


def _plain(text: str) -> str:
    return " ".join(text.casefold().split()).strip(_QUOTE_MARKS + " .,;:")
