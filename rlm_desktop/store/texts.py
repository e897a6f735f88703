"""The `texts` table: each distinct text once, named by its SHA-256 (documents, system prompts,
long prompts), however many sessions and calls use it."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence

from rlm_desktop.engine.read_on_demand import ReadOnDemand


def text_sha256(text: str) -> str:
    """The name of `text` in `texts`: the SHA-256 of its UTF-8 (a lone surrogate as its bytes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def keep_text(conn: sqlite3.Connection, text: str, digest: str | None = None) -> str:
    """Store `text` (a column's UTF-8 text) unless it is there already; returns its name."""
    digest = digest or text_sha256(text)
    conn.execute(
        "INSERT OR IGNORE INTO texts (sha256, text, chars) VALUES (?, ?, ?)",
        [digest, text, len(text)],
    )
    return digest


def read_text(conn: sqlite3.Connection, digest: str) -> str | None:
    """The text named `digest`, or None when the database does not hold it."""
    row = conn.execute("SELECT text FROM texts WHERE sha256 = ?", [digest]).fetchone()
    return None if row is None or row[0] is None else str(row[0])


class ReadTexts(ReadOnDemand[str]):
    """`count` texts, each read (`read(index)`) when it is indexed: nothing is held between
    reads."""


def session_texts(conn: sqlite3.Connection | None, session_id: str, count: int) -> ReadTexts:
    """The texts of a session's first `count` documents as the tables hold them (scrubbed),
    read through `conn` (on the thread that owns it) when indexed; none without a connection."""

    def read(position: int) -> str:
        assert conn is not None
        row = conn.execute(_SESSION_TEXT, [session_id, position]).fetchone()
        if row is None or row[0] is None:
            raise LookupError(f"document {position + 1} of session {session_id} is gone")
        return str(row[0])

    return ReadTexts(count if conn is not None else 0, read)


_SESSION_TEXT = """SELECT t.text FROM documents d JOIN texts t ON t.sha256 = d.sha256
    WHERE d.session_id = ? AND d.position = ?"""


class StoredDocuments(ReadOnDemand[tuple[str, str]]):
    """`(name, text)` of a session's documents in load order, as `Store.document_texts` gives
    them, with only their names and lengths held: each text is read (`read`, by its SHA-256)
    when it is asked for, the last one kept, so a check over a big session holds one at a time.
    """

    def __init__(self, rows: Sequence[tuple[str, str, int]], read: Callable[[str], str]) -> None:
        self.names = [name for name, _, _ in rows]
        self.lengths = [chars for _, _, chars in rows]
        self._digests = [digest for _, digest, _ in rows]
        self._read = read
        self._last: tuple[int, str] | None = None
        self.texts = ReadTexts(len(self.names), self.text)
        super().__init__(len(self.names), self._named)

    def text(self, index: int) -> str:
        """The text of document `index`."""
        if self._last is None or self._last[0] != index:
            self._last = index, self._read(self._digests[index])
        return self._last[1]

    def _named(self, index: int) -> tuple[str, str]:
        return self.names[index], self.text(index)
