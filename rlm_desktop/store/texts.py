"""The `texts` table: each distinct text once, named by its SHA-256 (documents, system prompts,
long prompts), however many sessions and calls use it."""

from __future__ import annotations

import hashlib
import sqlite3


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
