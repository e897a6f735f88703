"""The documents a health check reads, as names, lengths and texts: a stored session's
(`Store.stored_documents`) give their names and lengths at once and each text when it is read,
so the check over a big session does not hold every text beside its index."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class DocumentParts:
    """`names`, `lengths` (in characters) and `texts` of documents, in load order."""

    names: list[str]
    lengths: list[int]
    texts: Sequence[str]


@runtime_checkable
class ReadOnDemand(Protocol):
    """Documents that know their names and lengths and read a text when it is indexed (the
    store's `StoredDocuments`; named by shape, so the window's start imports no store)."""

    names: list[str]
    lengths: list[int]
    texts: Sequence[str]


def document_parts(documents: Sequence[tuple[str, str]]) -> DocumentParts:
    """The parts of `(name, text)` pairs, reading none of a stored session's texts."""
    if isinstance(documents, ReadOnDemand):
        return DocumentParts(list(documents.names), list(documents.lengths), documents.texts)
    texts = [text for _, text in documents]
    return DocumentParts([name for name, _ in documents], [len(text) for text in texts], texts)
