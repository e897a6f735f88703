"""The `texts` table: each distinct text once, named by its SHA-256 (documents, system prompts,
long prompts), however many sessions and calls use it."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from typing import overload


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


class SessionTexts(Sequence[str]):
    """The texts of a session's first `count` documents as the tables hold them (scrubbed),
    each read from the database when it is indexed: nothing is held between reads.

    Reads go through `conn`, on the thread that owns it."""

    def __init__(self, conn: sqlite3.Connection | None, session_id: str, count: int) -> None:
        self._conn = conn
        self._session_id = session_id
        self._count = count if conn is not None else 0

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[position] for position in range(self._count)[index]]
        position = range(self._count)[index]
        assert self._conn is not None  # a session with documents stored has a connection
        row = self._conn.execute(_SESSION_TEXT, [self._session_id, position]).fetchone()
        if row is None or row[0] is None:
            raise LookupError(f"document {position + 1} of session {self._session_id} is gone")
        return str(row[0])


_SESSION_TEXT = """SELECT t.text FROM documents d JOIN texts t ON t.sha256 = d.sha256
    WHERE d.session_id = ? AND d.position = ?"""
