"""What the reports say about an answer's sources and the passages read to answer it, in one
place: each report (Markdown, HTML) escapes these words its own way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rlm_desktop import formatting as fmt
from rlm_desktop.review.health.provenance import ReadPassage
from rlm_desktop.review.health.sources import CheckedSource, characters, match_label, place_label

Tone = Literal["ok", "check", "warning"]

ORIGINS = {"sources": "given as a source", "answer": "quoted in the answer"}
SOURCES_HEADING = "Sources"
READ_HEADING = "Read to answer"


def tone(source: CheckedSource) -> Tone:
    """How a source reads at a glance: found (`ok`), found approximately (`check`: read the
    passage), or not in the documents (`warning`)."""
    if not source.found:
        return "warning"
    return "check" if source.match == "fuzzy" else "ok"


def marker(source: CheckedSource) -> str:
    """`[2]`: the source's number as the answer card shows it."""
    return f"[{source.number}]"


def details(source: CheckedSource) -> list[str]:
    """What follows a source's state: where it is (when found) and who quoted it."""
    return [part for part in (place_label(source), ORIGINS[source.origin]) if part]


def state(source: CheckedSource) -> str:
    """The source's match in words (`found word for word`, `not in the documents`, ...)."""
    return match_label(source)


def passage_label(passage: ReadPassage) -> str:
    """`report.txt, characters 0–300`: where a passage read by a sub-call lies."""
    return characters(passage.document, passage.start, passage.end)


@dataclass(frozen=True)
class ReadListing:
    """The passages a report lists under "Read to answer", the sentence before them and the
    one after (empty when every passage is listed)."""

    lead: str
    passages: tuple[ReadPassage, ...]
    rest: str = ""


def read_listing(read: Sequence[ReadPassage]) -> ReadListing | None:
    """The passages whose sub-call's reply the answer repeats, or, when it repeats none, every
    passage the sub-calls were given; None when no sub-call read any."""
    if not read:
        return None
    used = tuple(passage for passage in read if passage.used)
    if not used:
        return ReadListing(
            "The run's sub-calls were given these passages; the answer repeats none of "
            "their replies:",
            tuple(read),
        )
    rest = len(read) - len(used)
    more = (
        f"{fmt.plural(rest, 'more passage')} went to sub-calls whose replies the answer does "
        "not repeat."
        if rest
        else ""
    )
    return ReadListing(
        "The answer repeats the replies of the sub-calls that were given these passages:",
        used,
        more,
    )
