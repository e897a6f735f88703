"""A run's documents kept on disk once loaded, each read back whole when it is needed.

Over a big folder the app would otherwise hold every text for the whole run, beside the
worker's own copy: the texts go into one temporary file with no name (`tempfile.TemporaryFile`,
gone when it is closed or the app dies, on every system) and the app keeps only their offsets
and metadata. The worker's hand-over (again on a restart), the store's writing thread and the
engine read a text back when they need it, one document at a time, exactly as it was loaded:
a restarted worker sees the same `context` as the first one did, whatever model code did to
its copy, and the file is the app's, outside every scratch folder.
"""

from __future__ import annotations

import dataclasses
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, overload

from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.read_on_demand import ReadOnDemand

ENCODING = "utf-8"
ERRORS = "surrogatepass"
"""Texts are kept as UTF-8, a lone surrogate (from a broken file) as its bytes."""


class _Spill:
    """The unnamed file and where each text lies in it; reads are safe from any thread."""

    def __init__(self, folder: Path) -> None:
        self._file: IO[bytes] = tempfile.TemporaryFile(  # noqa: SIM115 (open for the run)
            dir=folder, prefix="rlm-documents-"
        )
        self._lock = threading.Lock()
        self.spans: list[tuple[int, int]] = []
        self.chars: list[int] = []

    def append(self, text: str) -> None:
        data = text.encode(ENCODING, ERRORS)
        with self._lock:
            start = self._file.seek(0, 2)
            self._file.write(data)
        self.spans.append((start, len(data)))
        self.chars.append(len(text))

    def flush(self) -> None:
        """Write what is buffered now (so a full disk is known while the texts are kept)."""
        with self._lock:
            self._file.flush()

    def read(self, index: int) -> str:
        start, size = self.spans[index]
        with self._lock:
            self._file.seek(start)
            data = self._file.read(size)
        if len(data) != size:
            raise OSError(f"the run's kept documents lost document {index + 1}")
        return data.decode(ENCODING, ERRORS)

    def close(self) -> None:
        with self._lock:
            self._file.close()


class KeptTexts(Sequence[str]):
    """The texts of kept documents, in load order: each read from the file when indexed (a
    slice is another view, reading nothing)."""

    def __init__(self, spill: _Spill, positions: range) -> None:
        self._spill = spill
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> KeptTexts: ...

    def __getitem__(self, index: int | slice) -> str | KeptTexts:
        if isinstance(index, slice):
            return KeptTexts(self._spill, self._positions[index])
        return self._spill.read(self._positions[index])

    def chars(self, index: int) -> int:
        """The length of text `index`, in characters, without reading it."""
        return self._spill.chars[self._positions[index]]

    @property
    def total_chars(self) -> int:
        """The characters of every text, without reading any."""
        return sum(self._spill.chars[position] for position in self._positions)


class KeptDocuments(ReadOnDemand[ContextDocument]):
    """Documents whose texts live in a `KeptTexts`; indexing one reads its text back.

    `metas` are the documents' `context_meta` entries, made while they were kept. Raises
    `OSError` when `folder` cannot take the file (a full disk: nothing is left behind). Call
    `close` once the run is over (the file is removed; reading after that raises `ValueError`).
    """

    def __init__(self, documents: Iterable[ContextDocument], folder: Path) -> None:
        self._spill = _Spill(folder)
        self._documents: list[ContextDocument] = []
        self.metas: list[dict[str, object]] = []
        try:
            for document in documents:
                self._spill.append(document.text)
                self.metas.append(document.meta())
                self._documents.append(dataclasses.replace(document, text=""))
            self._spill.flush()
        except BaseException:
            self._spill.close()
            raise
        self.texts = KeptTexts(self._spill, range(len(self._documents)))
        super().__init__(len(self._documents), self._document)

    def _document(self, index: int) -> ContextDocument:
        return dataclasses.replace(self._documents[index], text=self.texts[index])

    def close(self) -> None:
        """Remove the file the texts are kept in."""
        self._spill.close()


def texts_of(documents: Sequence[ContextDocument]) -> Sequence[str]:
    """The documents' texts: read back one by one when they are kept, else as they are held."""
    if isinstance(documents, KeptDocuments):
        return documents.texts
    return [document.text for document in documents]


def chars_of(documents: Sequence[ContextDocument]) -> list[int]:
    """Each document's length in characters, without reading kept texts back."""
    if isinstance(documents, KeptDocuments):
        return [documents.texts.chars(index) for index in range(len(documents))]
    return [len(document.text) for document in documents]


def metas_of(documents: Sequence[ContextDocument]) -> list[dict[str, object]]:
    """The documents' `context_meta` entries, without reading kept texts back."""
    if isinstance(documents, KeptDocuments):
        return list(documents.metas)
    return [document.meta() for document in documents]
