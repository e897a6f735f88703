"""The answer's sources and the passages read to answer it, as span events of the root span.

One `rlm_desktop.source` event per source and one `rlm_desktop.read_to_answer` event per
passage a sub-call was given, at the time the answer was submitted (the root span's end). A
source's quote is document or model text, so like prompts and completions it is included only
with `include_content`, and cut to `QUOTE_CHARS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlm_desktop.review.health import HealthReport
    from rlm_desktop.review.health.provenance import ReadPassage
    from rlm_desktop.review.health.sources import CheckedSource

SOURCE_EVENT = "rlm_desktop.source"
READ_EVENT = "rlm_desktop.read_to_answer"
QUOTE_CHARS = 1000
"""A quote in an event is cut past this many characters (collectors bound attribute sizes)."""


@dataclass
class EventRecord:
    """One span event: its name, Unix nanoseconds and attributes (None values left out)."""

    name: str
    time_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


def _bounded(text: str) -> str:
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"


def source_attributes(source: CheckedSource, include_content: bool) -> dict[str, Any]:
    """The `rlm_desktop.source.*` attributes of one checked source."""
    values = {
        **source.to_json(),
        "note": source.note or None,
        "quote": _bounded(source.quote) if include_content else None,
    }
    return _prefixed(SOURCE_EVENT, values)


def read_attributes(passage: ReadPassage) -> dict[str, Any]:
    """The `rlm_desktop.read_to_answer.*` attributes of one passage a sub-call was given."""
    return _prefixed(READ_EVENT, passage.to_json())


def _prefixed(event: str, values: dict[str, Any]) -> dict[str, Any]:
    """`values` named `event.key`, those that are None left out."""
    return {f"{event}.{key}": value for key, value in values.items() if value is not None}


def answer_events(
    health: HealthReport | None, time_ns: int, include_content: bool
) -> list[EventRecord]:
    """The events of the span that submitted the answer: its sources, then what was read."""
    if health is None:
        return []
    return [
        *(
            EventRecord(SOURCE_EVENT, time_ns, source_attributes(source, include_content))
            for source in health.sources
        ),
        *(EventRecord(READ_EVENT, time_ns, read_attributes(passage)) for passage in health.read),
    ]
