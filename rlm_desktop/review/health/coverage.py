"""Document coverage: which characters of the documents reached a model, by exact matching.

A document character counts as read when it lies in a passage of at least `MIN_RUN` characters
that appears verbatim in something a model was given: a call's prompt (sub-calls, child RLM
calls, a direct call) or what an RLM call's model was shown after its code ran. Shorter
coincidences (a word, a number) are not evidence of reading.

The documents are indexed by the hash of the `KEY`-character slice at every `STRIDE`-th
position (`slice_index.py`, about 18 bytes a slice), so any passage of `MIN_RUN` characters holds an indexed slice; a source is scanned
position by position until a slice hits, the match is then extended both ways by comparing
slices (C speed) and the scan jumps past it. Text repeated within the documents is counted once,
at one of its places (the one whose indexed slice the scan met first).

Text that quotes nothing is the slow case: every position is probed. An index probes at most
`PROBE_LIMIT` positions without a match in all; past it, what is left is not scanned and
`Coverage.unscanned` says how many characters that was (coverage may then be higher than shown).
A prompt kept as a span of the documents (`store/prompts.py`) is marked read as it is, unscanned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rlm_desktop.review.health.document_parts import document_parts
from rlm_desktop.review.health.slice_index import SliceIndex

MIN_RUN = 64
KEY = 32
STRIDE = MIN_RUN - KEY + 1
PROBE_LIMIT = 10_000_000
"""Positions probed without a match, at most, per index (1 to 3 seconds of scanning)."""
_FIRST_STEP = 64


@dataclass(frozen=True)
class DocumentCoverage:
    """One document's coverage: `ranges` read and `uncovered`, as `[start, end)` offsets."""

    name: str
    chars: int
    covered: int
    uncovered: tuple[tuple[int, int], ...]

    @property
    def share(self) -> float:
        """The share of the document's characters that reached a model (1.0 when it is empty)."""
        return self.covered / self.chars if self.chars else 1.0

    @property
    def read(self) -> tuple[tuple[int, int], ...]:
        """The `[start, end)` ranges that reached a model: the gaps between the unread ones."""
        ranges, start = [], 0
        for gap_start, gap_end in self.uncovered:
            if gap_start > start:
                ranges.append((start, gap_start))
            start = gap_end
        if start < self.chars:
            ranges.append((start, self.chars))
        return tuple(ranges)

    def to_json(self) -> dict[str, Any]:
        """`{"name", "share", "chars", "covered", "uncovered": [[start, end], ...]}`."""
        return {
            "name": self.name,
            "share": round(self.share, 4),
            "chars": self.chars,
            "covered": self.covered,
            "uncovered": [list(pair) for pair in self.uncovered],
        }


@dataclass(frozen=True)
class Coverage:
    """Coverage of every document of a run, and overall."""

    documents: tuple[DocumentCoverage, ...]
    unscanned: int = 0
    """Characters of what models were given that were not scanned (`PROBE_LIMIT`)."""

    @property
    def share(self) -> float:
        """Characters read over characters loaded, across all documents (1.0 with none)."""
        total = sum(doc.chars for doc in self.documents)
        return sum(doc.covered for doc in self.documents) / total if total else 1.0

    @property
    def unscanned_note(self) -> str | None:
        """What the check left unscanned, in a sentence (None when it scanned everything)."""
        if not self.unscanned:
            return None
        return (
            f"{self.unscanned:,} characters of what the models were given were not scanned for"
            f" quotes (the check stops after {PROBE_LIMIT:,} positions that quote nothing): the"
            " documents may have been read more than shown."
        )

    def to_json(self) -> dict[str, Any]:
        """DESIGN.md's `coverage` object: `{"share", "documents": [...]}`, and `unscanned_chars`."""
        return {
            "share": round(self.share, 4),
            "documents": [doc.to_json() for doc in self.documents],
            "unscanned_chars": self.unscanned,
        }


class CoverageIndex:
    """An index of the documents that sources are matched against; feed it with `add`.

    Sources may be added at any time (a live run adds them as they come); `coverage()` says
    what has been read so far. At most `probe_limit` positions are probed without a match in
    all; what is left after that is counted in `unscanned`.
    """

    def __init__(
        self, documents: Sequence[tuple[str, str]], probe_limit: int = PROBE_LIMIT
    ) -> None:
        parts = document_parts(documents)
        self._names, self._lengths, self._texts = parts.names, parts.lengths, parts.texts
        self._read: list[list[tuple[int, int]]] = [[] for _ in self._names]
        self._probes_left = probe_limit
        self.unscanned = 0
        self._slices = SliceIndex(self._texts, KEY, STRIDE, self._lengths)

    @property
    def nbytes(self) -> int:
        """What the index of the documents holds, in bytes (about 18 a slice)."""
        return self._slices.nbytes

    def add(self, source: str) -> int:
        """Mark every passage of the documents that `source` quotes as read; returns how many
        characters of document text it quotes (a passage quoted twice counts twice)."""
        return self.mark(self.passages(source))

    def mark(self, passages: Iterable[tuple[int, int, int]]) -> int:
        """Mark `passages` (`(document, start, end)`, as `passages` finds them) as read; returns
        how many characters they hold."""
        quoted = 0
        for number, start, end in passages:
            self._read[number].append((start, end))
            quoted += end - start
        return quoted

    def span(self, number: int, start: int, end: int) -> list[tuple[int, int, int]]:
        """A passage given as it is (a prompt kept as a span of a document), as `passages`
        gives them: within its document, and only when it is at least `MIN_RUN` long."""
        if not 0 <= number < len(self._lengths):
            return []
        start, end = max(start, 0), min(end, self._lengths[number])
        return [(number, start, end)] if end - start >= MIN_RUN else []

    def passages(self, source: str) -> list[tuple[int, int, int]]:
        """The passages of the documents that `source` quotes, as `(document, start, end)`
        (nothing is marked read); past the probe limit, what is left is counted unscanned."""
        slices, texts = self._slices, self._texts
        found: list[tuple[int, int, int]] = []
        position, floor, end = 0, 0, len(source) - KEY
        # Positions below `stop` may be probed: the budget left, plus the positions jumped over.
        stop = self._probes_left
        last = min(end, stop - 1)
        while position <= last:
            key = source[position : position + KEY]
            hit = slices.get(hash(key))
            if hit is None:
                position += 1
                continue
            number, start = hit
            text = texts[number]
            if text[start : start + KEY] != key:
                position += 1
                continue
            ahead = _common_prefix(source, position, text, start)
            behind = _common_suffix(source, position, text, start, position - floor)
            if behind + ahead < MIN_RUN:
                position += 1
                continue
            found.append((number, start - behind, start + ahead))
            position = floor = position + ahead
            stop += ahead
            last = min(end, stop - 1)
        if position <= end:  # the budget ran out
            self.unscanned += len(source) - position
        self._probes_left = max(stop - position, 0)
        return found

    def add_all(self, sources: Iterable[str | None]) -> None:
        """`add` each source that is not empty."""
        for source in sources:
            if source:
                self.add(source)

    def coverage(self) -> Coverage:
        """What has been read so far."""
        documents = []
        for number, (name, length) in enumerate(zip(self._names, self._lengths, strict=True)):
            merged = self._read[number] = merge(self._read[number])
            documents.append(
                DocumentCoverage(
                    name=name,
                    chars=length,
                    covered=sum(end - start for start, end in merged),
                    uncovered=tuple(gaps(merged, length)),
                )
            )
        return Coverage(tuple(documents), self.unscanned)


def merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping and touching `[start, end)` ranges joined, in order."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def gaps(ranges: Sequence[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """The `[start, end)` ranges of `0..length` that the sorted, merged `ranges` leave out."""
    found, cursor = [], 0
    for start, end in ranges:
        if start > cursor:
            found.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < length:
        found.append((cursor, length))
    return found


def _common_prefix(a: str, i: int, b: str, j: int) -> int:
    """How many characters `a[i:]` and `b[j:]` share from their start."""
    return _agreeing_run(
        min(len(a) - i, len(b) - j),
        lambda low, high: a[i + low : i + high] == b[j + low : j + high],
    )


def _common_suffix(a: str, i: int, b: str, j: int, bound: int) -> int:
    """How many characters `a[:i]` and `b[:j]` share at their end (at most `bound`)."""
    return _agreeing_run(
        min(i, j, bound), lambda low, high: a[i - high : i - low] == b[j - high : j - low]
    )


def _agreeing_run(limit: int, agree: Callable[[int, int], bool]) -> int:
    """How far (at most `limit`) two texts agree from an anchor, `agree(low, high)` saying
    whether they do from distance `low` to `high`: steps that double, then a binary search in
    the first step that differs, so a long match costs few slice comparisons."""
    low, step = 0, _FIRST_STEP
    while low < limit:
        high = min(low + step, limit)
        if not agree(low, high):
            while high - low > 1:
                middle = (low + high) // 2
                if agree(low, middle):
                    low = middle
                else:
                    high = middle
            return low
        low, step = high, step * 2
    return low
