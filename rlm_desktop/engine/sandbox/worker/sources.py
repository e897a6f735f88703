"""The sources a model gives with its answer (`FINAL(answer, sources=[...])`), read in the REPL.

A source is a quote copied from `context` (a string) or a `(document_index, start, end)` span.
They are checked here only for their shape and, for spans, against the documents' lengths, so
that the model hears at once what is wrong and can answer again; the application checks every
source again against the documents themselves, trusting nothing from this process.
"""

from __future__ import annotations

from typing import Any

from .errors import ERRORS_MODULE

MAX_SOURCES = 50
"""Sources kept per answer; the rest are dropped (an answer is not a bibliography)."""
MAX_QUOTE_CHARS = 2_000
"""A longer quote is cut to this many characters: its start is enough to find it."""

HOW = (
    "give each source as a quote copied word for word from context (a string) "
    "or as a (document_index, start, end) span of character offsets"
)


class SourceError(ValueError):
    """A source the model gave cannot be taken; the message says which and how to fix it."""

    __module__ = ERRORS_MODULE


def read_sources(signal: str, given: Any, documents: list[int]) -> list[dict[str, Any]]:
    """`given` as portable sources (`{"quote"}` or `{"document_index", "start", "end"}`).

    `documents` are the lengths of the documents spans point into (`context`'s). Raises
    `SourceError` naming the first source that is neither a quote nor a span inside them.
    """
    if given is None:
        return []
    if isinstance(given, str) or _is_span(given):
        given = [given]
    if isinstance(given, dict) or not isinstance(given, list | tuple):
        raise SourceError(f"{signal}: sources must be a list ({HOW}), not {type(given).__name__}")
    sources = []
    for number, source in enumerate(list(given)[:MAX_SOURCES], start=1):
        if isinstance(source, str):
            quote = source.strip()
            if quote:
                sources.append({"quote": quote[:MAX_QUOTE_CHARS]})
        elif _is_span(source):
            sources.append(_span(signal, number, tuple(source), documents))
        else:
            raise SourceError(f"{signal}: source {number} is a {type(source).__name__}; {HOW}")
    return sources


def _is_span(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) == 3
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


def _span(signal: str, number: int, span: tuple[int, ...], documents: list[int]) -> dict[str, Any]:
    index, start, end = span
    if not 0 <= index < len(documents):
        which = "document 0" if len(documents) == 1 else f"documents 0 to {len(documents) - 1}"
        raise SourceError(
            f"{signal}: source {number} {span} names document {index}, but context has "
            f"{which}; give a document index in range, or quote the passage as a string"
        )
    length = documents[index]
    if not 0 <= start < end <= length:
        raise SourceError(
            f"{signal}: source {number} {span} is outside document {index}, which has "
            f"{length:,} characters; give 0 <= start < end <= {length}, or quote the passage "
            "as a string"
        )
    return {"document_index": index, "start": start, "end": end}


def document_lengths(context: Any) -> list[int]:
    """The lengths of the documents a span can point into: `context` itself, or each of its
    items when it is a list."""
    if isinstance(context, list | tuple):
        return [len(item) if isinstance(item, str) else len(str(item)) for item in context]
    return [len(context) if isinstance(context, str) else len(str(context))]
