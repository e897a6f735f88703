"""Migration m013's work on the sessions already saved: each long prompt kept once (as the
writer now keeps it, `prompts.py`), and the event log without the prompts the calls' rows hold.

Rows are read one at a time, so a database of gigabytes is migrated in little memory.
"""

from __future__ import annotations

import json
import sqlite3

from rlm_desktop.store.prompts import HEAD_CHARS, LONG_PROMPT_CHARS, DocumentSpans
from rlm_desktop.store.texts import keep_text
from rlm_desktop.store.writer import stored_json


def migrate_prompts(conn: sqlite3.Connection) -> None:
    """Bring every saved call's prompt to the m013 form (the caller holds the transaction)."""
    conn.execute("UPDATE calls SET prompt_chars = length(prompt) WHERE prompt IS NOT NULL")
    _log_without_prompts(conn)
    _long_prompts_kept_once(conn)


def _log_without_prompts(conn: sqlite3.Connection) -> None:
    """Drop from each `CallStarted` log row the prompt its call's row holds exactly."""
    rowids = [row[0] for row in conn.execute("SELECT id FROM events WHERE type = 'CallStarted'")]
    for rowid in rowids:
        data, prompt = conn.execute(
            "SELECT e.data, c.prompt FROM events e LEFT JOIN calls c"
            " ON c.session_id = e.session_id AND c.id = json_extract(e.data, '$.call_id')"
            " WHERE e.id = ?",
            [rowid],
        ).fetchone()
        fields = json.loads(data)
        if prompt is None or fields.get("prompt") != prompt:
            continue
        del fields["prompt"]
        conn.execute("UPDATE events SET data = ? WHERE id = ?", [stored_json(fields), rowid])


def _long_prompts_kept_once(conn: sqlite3.Connection) -> None:
    """Keep each long prompt as the document span it repeats, else as a shared text."""
    calls = conn.execute(
        "SELECT rowid, session_id FROM calls WHERE length(prompt) > ? ORDER BY session_id",
        [LONG_PROMPT_CHARS],
    ).fetchall()
    spans, spans_of = DocumentSpans([]), None
    for rowid, session_id in calls:
        if session_id != spans_of:
            spans, spans_of = DocumentSpans(_documents(conn, session_id)), session_id
        (prompt,) = conn.execute("SELECT prompt FROM calls WHERE rowid = ?", [rowid]).fetchone()
        span = spans.find(prompt)
        if span is not None:
            conn.execute(
                "UPDATE calls SET prompt = ?, prompt_document = ?, prompt_start = ?,"
                " prompt_end = ? WHERE rowid = ?",
                [prompt[:HEAD_CHARS], *span, rowid],
            )
        else:
            conn.execute(
                "UPDATE calls SET prompt = ?, prompt_sha256 = ? WHERE rowid = ?",
                [prompt[:HEAD_CHARS], keep_text(conn, prompt), rowid],
            )


def _documents(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """The texts of a session's documents by position ("" where one's text is not held)."""
    rows = conn.execute(
        "SELECT d.position, t.text FROM documents d LEFT JOIN texts t ON t.sha256 = d.sha256"
        " WHERE d.session_id = ? ORDER BY d.position",
        [session_id],
    ).fetchall()
    texts = [""] * (max((position for position, _ in rows), default=-1) + 1)
    for position, text in rows:
        texts[position] = text or ""
    return texts
