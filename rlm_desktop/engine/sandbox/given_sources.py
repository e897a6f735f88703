"""The sources a model submits with its answer, as the application holds them.

The REPL worker sends them as JSON (`{"quote": ...}` or `{"document_index", "start", "end"}`);
nothing it sends is trusted: `given_sources` keeps only well-formed entries, bounded in number
and length, and whether they are true is checked against the documents in `review.health.sources`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rlm_desktop.engine.sandbox.worker.sources import MAX_QUOTE_CHARS, MAX_SOURCES


@dataclass(frozen=True)
class GivenSource:
    """One source as the model gave it: a `quote` copied from `context`, or a `span`
    `(document_index, start, end)` of character offsets."""

    quote: str | None = None
    span: tuple[int, int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        """`{"quote"}` or `{"document_index", "start", "end"}`."""
        if self.span is not None:
            index, start, end = self.span
            return {"document_index": index, "start": start, "end": end}
        return {"quote": self.quote}


def given_sources(value: Any) -> tuple[GivenSource, ...]:
    """The well-formed sources of a JSON list (others are dropped), at most `MAX_SOURCES`."""
    if not isinstance(value, list):
        return ()
    sources = (_given(item) for item in value[:MAX_SOURCES])
    return tuple(source for source in sources if source is not None)


def sources_from_text(text: str | None) -> tuple[GivenSource, ...]:
    """The sources the store kept (`calls.answer_sources`, a JSON list); none for a missing or
    damaged value."""
    if not text:
        return ()
    try:
        return given_sources(json.loads(text))
    except (ValueError, RecursionError):
        return ()


def _given(item: Any) -> GivenSource | None:
    if not isinstance(item, dict):
        return None
    quote = item.get("quote")
    if isinstance(quote, str) and quote.strip():
        return GivenSource(quote=quote[:MAX_QUOTE_CHARS])
    span = tuple(item.get(key) for key in ("document_index", "start", "end"))
    if all(isinstance(v, int) and not isinstance(v, bool) for v in span):
        index, start, end = span
        return GivenSource(span=(int(index), int(start), int(end)))  # type: ignore[arg-type]
    return None
