"""How honestly a trial's answer cites: its sources checked as the window and the CLI check them
(`HealthReport.sources`), then held against the passages the task planted (`Task.gold_spans`).

A found source *cites* a gold span when it lies in the same document, their `[start, end)`
ranges overlap, and at most `MAX_OUTSIDE_CHARS` of the source fall outside the gold spans it
overlaps: a few words of the needle's sentence count, the sentence with its neighbouring line
counts, a span over the whole document does not. A trial's source score is the share of its
gold spans cited (needle and `where` code tasks have one, so 1 or 0; an aggregate task its
relevant lines, a `calls` code task its call path). At most `MAX_SOURCES` spans are asked
for, as no answer can give more sources. Citing passages beside the gold costs nothing here;
a quote or span that is not in the documents counts in `not_found`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rlm_desktop.engine.sandbox.worker.sources import MAX_SOURCES
from rlm_desktop.evaluation.tasks import GoldSpan, Task

if TYPE_CHECKING:
    from rlm_desktop.review.health.sources import CheckedSource
    from rlm_desktop.store import Store

MAX_OUTSIDE_CHARS = 200
"""Characters of a source allowed beyond the gold it overlaps (about two lines of a haystack)."""


@dataclass(frozen=True)
class SourceTally:
    """What a trial's sources came to: gold spans asked for and cited, sources checked and
    not found in the documents."""

    gold_spans: int = 0
    gold_cited: int = 0
    checked: int = 0
    not_found: int = 0


def cited_gold(sources: Sequence[CheckedSource], gold: Sequence[GoldSpan]) -> set[int]:
    """The indexes of the `gold` spans that some found source of `sources` cites."""
    cited: set[int] = set()
    for source in sources:
        if not source.found or source.document_index is None:
            continue
        if source.start is None or source.end is None:
            continue
        start, end = source.start, source.end
        hits = [
            i
            for i, span in enumerate(gold)
            if span.document_index == source.document_index
            and span.start < end
            and start < span.end
        ]
        inside = sum(min(end, gold[i].end) - max(start, gold[i].start) for i in hits)
        if hits and (end - start) - inside <= MAX_OUTSIDE_CHARS:
            cited.update(hits)
    return cited


def tally(sources: Sequence[CheckedSource], gold: Sequence[GoldSpan]) -> SourceTally:
    """The tally of `sources` against `gold` (no gold: nothing asked for, `gold_spans` 0)."""
    wanted = min(len(gold), MAX_SOURCES)
    return SourceTally(
        gold_spans=wanted,
        gold_cited=min(len(cited_gold(sources, gold)), wanted),
        checked=len(sources),
        not_found=sum(1 for source in sources if not source.found),
    )


def checked_sources(store: Store, session_id: str, task: Task) -> tuple[CheckedSource, ...]:
    """The answer's sources of the trial's stored session, checked against the task's
    documents by the run's health check."""
    from rlm_desktop.review.health.report import analyse
    from rlm_desktop.store.detail import load_detail

    return analyse(load_detail(store, session_id), task.documents).sources
