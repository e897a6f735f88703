"""A live run's documents, stored beside it by the store's writing thread, a chunk at a time.

Nothing of this is on the way to the run's first request: the store's thread scrubs, names and
inserts the documents in transactions of about `CHUNK_CHARS` characters, between the run's own
event batches, so neither the run nor a reader of the database waits for one long write. A run
stopped early keeps every document (`Recorder.close` stores what is left); a killed one keeps the
documents stored so far, and its session is marked `interrupted` when the database is next opened.

A document is hashed once: its text is named by its SHA-256 as the tables keep it. A file stored
before is known again by its path, size, modification time and length (`known_files`): it is
neither hashed nor inserted again. Only a text the scrub left exactly as loaded is known again,
so no secret of this run can come in through it: the scrub runs on the text first, and a text it
changed is hashed and stored as scrubbed (the scrub, not the cache, decides what is written).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass

from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.store.redact import Redactor
from rlm_desktop.store.texts import ReadTexts, keep_text, session_texts, text_sha256
from rlm_desktop.store.writer import document_row, encodable, file_size, stored_text

CHUNK_CHARS = 4_000_000
"""About how much text one transaction stores (~20 ms of writing on this machine)."""
KNOWN_AFTER_S = 2.0
"""A file modified this close to the run's start may have changed while it was being loaded:
it is not listed in `known_files` (git's "racily clean" rule)."""

_KNOWN = """SELECT k.sha256 FROM known_files k JOIN texts t ON t.sha256 = k.sha256
    WHERE k.path = ? AND k.size = ? AND k.mtime_ns = ? AND k.chars = ?"""
_REMEMBER = """INSERT OR REPLACE INTO known_files (path, size, mtime_ns, chars, sha256)
    VALUES (?, ?, ?, ?, ?)"""

_COLUMNS = ("name", "path", "size", "sha256", "chars", "tokens", "type", "sections", "attached_to")
_DOCUMENT = f"""INSERT INTO documents (session_id, position, {", ".join(_COLUMNS)})
    VALUES (:session_id, :position, {", ".join(f":{name}" for name in _COLUMNS)})
    ON CONFLICT (session_id, position) DO UPDATE SET
    {", ".join(f"{name} = excluded.{name}" for name in _COLUMNS if name != "tokens")},
    tokens = coalesce(excluded.tokens, documents.tokens)"""
"""A document's row; the run's `RunStarted` may have listed it first (its tokens are kept)."""


@dataclass(frozen=True)
class StoredChunk:
    """What one transaction stored: how many documents, and their texts as stored."""

    count: int
    texts: list[str]


class DocumentsBeside:
    """The documents of one session still to be stored, in load order."""

    def __init__(
        self, session_id: str, documents: Sequence[ContextDocument], redactor: Redactor
    ) -> None:
        self._session_id = session_id
        self._documents = documents  # kept documents are read back one at a time, not copied
        self._end = len(documents)
        self._redactor = redactor
        self._since_ns = time.time_ns() - int(KNOWN_AFTER_S * 1e9)
        self._connection: sqlite3.Connection | None = None
        self.stored = 0
        """How many documents are stored (their rows and texts committed)."""
        self.known_again = 0
        """How many of them were known again (neither hashed nor inserted)."""

    @property
    def left(self) -> int:
        """How many documents are still to be stored."""
        return self._end - self.stored

    @property
    def texts(self) -> ReadTexts:
        """The stored documents' texts, as the tables hold them (read back when indexed, on
        the writing thread)."""
        return session_texts(self._connection, self._session_id, self.stored)

    def store_chunk(self, conn: sqlite3.Connection) -> StoredChunk:
        """Store the next documents, about `CHUNK_CHARS` of text (caller holds a transaction;
        call `committed` once it is)."""
        self._connection = conn
        texts: list[str] = []
        taken = 0
        while self.stored + len(texts) < self._end and (not texts or taken < CHUNK_CHARS):
            position = self.stored + len(texts)
            text = self._store(conn, position, self._documents[position])
            texts.append(text)
            taken += len(text) + 1
        return StoredChunk(len(texts), texts)

    def committed(self, chunk: StoredChunk) -> None:
        """`chunk` is in the database."""
        self.stored += chunk.count

    def abandon(self) -> int:
        """Store no more of the documents (a bug stopped them); returns how many are left out."""
        left = self.left
        self._end = self.stored
        return left

    def _store(self, conn: sqlite3.Connection, position: int, document: ContextDocument) -> str:
        loaded = document.text
        text = stored_text(self._redactor.text(loaded))
        intact = text == loaded
        state = _file_state(document) if intact else None
        digest = None
        if state is not None:
            found = conn.execute(_KNOWN, [document.path, *state, len(text)]).fetchone()
            digest = None if found is None else str(found[0])
        if digest is not None:
            self.known_again += 1
        else:
            digest = keep_text(conn, text, text_sha256(text))
            if state is not None and state[1] < self._since_ns:
                conn.execute(_REMEMBER, [document.path, *state, len(text), digest])
        size = state[0] if state is not None else file_size(document)
        conn.execute(
            _DOCUMENT, document_row(self._session_id, position, document, text, digest, size)
        )
        return text


def _file_state(document: ContextDocument) -> tuple[int, int] | None:
    """`(size, mtime_ns)` of the file a whole document was loaded from; None for a document
    that is not a whole file of its own (an attachment), whose path is not UTF-8 (`known_files`
    is not its place) or whose file cannot be read."""
    if not document.path or document.attached_to is not None or not encodable(document.path):
        return None
    try:
        status = os.stat(document.path)
    except (OSError, ValueError):
        return None
    return status.st_size, status.st_mtime_ns
