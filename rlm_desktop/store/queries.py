"""Read-side SQL: resolving ids, listing, the `show --json` shape, interruption (search is in
`search.py`)."""

from __future__ import annotations

import json
import sqlite3
import sys
from typing import Any

from rlm_desktop import ids
from rlm_desktop.engine.context import sections_from_json
from rlm_desktop.store import integrity
from rlm_desktop.store.prompts import PromptReader
from rlm_desktop.store.search import fts_query, matching_sessions

Row = dict[str, Any]
_SESSION_COLUMNS = (
    "id, query, status, mode, chosen_mode, model, sub_model, profile, answer, error, cost_usd,"
    " coalesce(input_tokens, 0) AS input_tokens, coalesce(output_tokens, 0) AS output_tokens,"
    " coalesce(turns, 0) AS turns, coalesce(sub_calls, 0) AS sub_calls,"
    " coalesce(max_depth_reached, 0) AS max_depth_reached, unpriced, wall_s, started_at, ended_at,"
    " origin_name, origin_format, imported_at, origin_left_out"
)
_CALL_COLUMNS = (
    "id, parent_id, kind, depth, model, status, coalesce(input_tokens, 0) AS input_tokens,"
    " coalesce(output_tokens, 0) AS output_tokens, cost_usd, started_at, ended_at, error"
)


def rows(conn: sqlite3.Connection, sql: str, params: list[Any]) -> list[Row]:
    """The result of `sql` as a list of dicts."""
    cursor = conn.execute(sql, params)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]


def resolve(conn: sqlite3.Connection, session_id: str, error: type[Exception]) -> str:
    """The full id for `session_id` (an id or a unique prefix of one); `error` otherwise, also
    when the text given could not start an id or the session found has an id the app would not
    make (a shared or damaged database: `ids`), so no caller ever acts on one."""
    hint = "run `rlm-desktop sessions list` to see the ids"
    if not session_id.strip():
        raise error(f"no session id given: {hint}")
    try:
        ids.checked_prefix(session_id)
    except ids.MalformedId as malformed:
        raise error(str(malformed)) from None
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", [session_id]).fetchone():
        return _well_formed(session_id, error)
    pattern = session_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    found = conn.execute(
        "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2", [pattern]
    ).fetchall()
    if not found:
        raise error(f"no session {session_id!r}: {hint}")
    if len(found) > 1:
        raise error(f"{session_id!r} matches more than one session: give more of the id")
    return _well_formed(found[0][0], error)


def _well_formed(session_id: object, error: type[Exception]) -> str:
    try:
        return ids.checked(session_id)
    except ids.MalformedId as malformed:
        raise error(str(malformed)) from None


UNFINISHED_REPLIES = """UPDATE turns SET unfinished_reply = (
        SELECT r.content FROM llm_requests r WHERE r.session_id = turns.session_id
        AND r.call_id = turns.call_id AND r.turn = turns.idx AND r.content != ''
        ORDER BY r.sent_at DESC, r.responded_at DESC, r.rowid DESC LIMIT 1)
    WHERE session_id = :sid AND call_id = coalesce(:call_id, call_id) AND reply IS NULL
    AND unfinished_reply IS NULL"""
"""Keep, for each turn of the call `:call_id` (every call when NULL) of session `:sid` that ended
without finishing, the reply its request brought back (the last one, as `SessionDetail.reply_of`
reads it): search then finds the code that was running, as the exports show it."""


CUT_OFF = "cut off when the app stopped; charged what it held"
CHARGE_CUT_OFF_REQUESTS = """UPDATE llm_requests SET
    input_tokens = reserved_tokens - coalesce(reserved_output_tokens, 0),
    output_tokens = coalesce(reserved_output_tokens, 0), cost_usd = reserved_cost_usd,
    error = coalesce(error || '; ', '') || :cut_off
    WHERE session_id = :id AND responded_at IS NULL AND reserved_tokens IS NOT NULL
    AND reserved_output_tokens IS NOT NULL"""
"""Charge each request that never came back its hold (what the ledger charges one cancelled in
flight). Requests saved before holds were kept (m009) have no output hold and stay uncharged."""
CALL_TOTALS_FROM_REQUESTS = """UPDATE calls SET
    input_tokens = (SELECT coalesce(sum(r.input_tokens), 0) FROM llm_requests r
                    WHERE r.session_id = calls.session_id AND r.call_id = calls.id),
    output_tokens = (SELECT coalesce(sum(r.output_tokens), 0) FROM llm_requests r
                     WHERE r.session_id = calls.session_id AND r.call_id = calls.id),
    cost_usd = (SELECT sum(r.cost_usd) FROM llm_requests r
                WHERE r.session_id = calls.session_id AND r.call_id = calls.id)
    WHERE session_id = :id AND status = 'interrupted' AND input_tokens IS NULL"""


def mark_interrupted(conn: sqlite3.Connection, session_id: str) -> None:
    """Close a `running` session with status `interrupted` and totals from what was written;
    the turns it was in keep the replies they had (`UNFINISHED_REPLIES`), requests cut off are
    charged what they held (`CHARGE_CUT_OFF_REQUESTS`), and so are the calls they belong to."""
    conn.execute(
        "UPDATE calls SET status = 'interrupted' WHERE session_id = ? AND status = 'running'",
        [session_id],
    )
    conn.execute(UNFINISHED_REPLIES, {"sid": session_id, "call_id": None})
    conn.execute(CHARGE_CUT_OFF_REQUESTS, {"id": session_id, "cut_off": CUT_OFF})
    conn.execute(CALL_TOTALS_FROM_REQUESTS, {"id": session_id})
    last_event = "(SELECT max(ts) FROM events WHERE session_id = :id)"
    requests = "FROM llm_requests WHERE session_id = :id AND input_tokens IS NOT NULL"
    conn.execute(
        f"""UPDATE sessions SET status = 'interrupted',
            ended_at = coalesce({last_event}, started_at),
            wall_s = coalesce({last_event}, started_at) - started_at,
            input_tokens = (SELECT coalesce(sum(input_tokens), 0) {requests}),
            output_tokens = (SELECT coalesce(sum(output_tokens), 0) {requests}),
            cost_usd = (SELECT coalesce(sum(cost_usd), 0.0) {requests}),
            unpriced = (SELECT count(*) > 0 {requests} AND cost_usd IS NULL),
            turns = (SELECT count(*) FROM turns WHERE session_id = :id),
            sub_calls = (SELECT count(*) FROM calls WHERE session_id = :id
                         AND parent_id IS NOT NULL),
            max_depth_reached = (SELECT coalesce(max(depth), 0) FROM calls
                                 WHERE session_id = :id)
        WHERE id = :id AND status = 'running'""",
        {"id": session_id},
    )


def _session_row(row: Row) -> Row:
    """A session's row as the listing and `show` give it. A value of the wrong kind (a shared
    or hand-made database: `integrity`) is left out (a count as 0), and the row is `damaged`."""
    kinds = integrity.columns("sessions")
    wrong = wrong_kinds(row)
    for key in wrong:
        row[key] = 0 if kinds[key] == "I" else None
    row["unpriced"] = bool(row.get("unpriced"))
    row["imported"] = imported(row)
    if not ids.is_well_formed(row.get("id")):
        row["damaged"] = DAMAGED_ID
    else:
        row["damaged"] = DAMAGED_RECORD.format(", ".join(wrong)) if wrong else None
    return row


def imported(row: Row) -> Row | None:
    """Where an imported session came from (`{"file", "format", "imported_at", "left_out"}`;
    the origin columns taken out of `row`), or None for a session run here. `left_out` is what
    the file could not carry, as lines of text (none where the column holds anything else: a
    shared database is read as it is)."""
    origin = {key: row.pop(f"origin_{key}", None) for key in ("name", "format", "left_out")}
    when = row.pop("imported_at", None)
    if origin["format"] is None:
        return None
    return {
        "file": origin["name"],
        "format": origin["format"],
        "imported_at": when,
        "left_out": stored_lines(origin["left_out"]),
    }


def stored_lines(stored: object) -> list[str]:
    """A JSON list of lines, as `origin_left_out` keeps it; [] for anything else."""
    if not isinstance(stored, str):
        return []
    try:
        value = json.loads(stored)
    except ValueError:
        return []
    return [line for line in value if isinstance(line, str)] if isinstance(value, list) else []


def wrong_kinds(row: Row) -> list[str]:
    """The columns of a `sessions` row whose value is not of the column's kind (`integrity`)."""
    kinds = integrity.columns("sessions")
    return [key for key, value in row.items() if key in kinds and not _holds(kinds[key], value)]


def _holds(kind: str, value: object) -> bool:
    if value is None:
        return True
    if kind in "TJ":
        return isinstance(value, str)
    return isinstance(value, int | float) and not isinstance(value, bool)


DAMAGED_ID = "its id is not one this app makes (a shared or damaged database): it is not acted on"
"""Why a listed session is `damaged`: shown, never opened, exported or deleted."""
DAMAGED_RECORD = (
    "its record holds values of the wrong kind ({}; a shared or damaged database): it is not "
    "acted on"
)


def list_sessions(conn: sqlite3.Connection, search: str | None, limit: int) -> list[Row]:
    """Sessions newest first, optionally only those matching `search`."""
    if search is None:
        return _listed(conn, "", [], limit)
    match = fts_query(search)
    if match is None:
        return []
    matching, params = matching_sessions(match)
    return _listed(conn, f"WHERE s.id IN ({matching})", params, limit)


def sessions_with_ids(conn: sqlite3.Connection, ids: list[str]) -> list[Row]:
    """The listing rows of the sessions `ids`, newest first."""
    return _listed(conn, "WHERE s.id IN (SELECT value FROM json_each(?))", [json.dumps(ids)], -1)


def _listed(conn: sqlite3.Connection, where: str, params: list[Any], limit: int) -> list[Row]:
    found = rows(
        conn,
        f"SELECT {_SESSION_COLUMNS}, sandbox, (SELECT count(*) FROM documents d"
        f" WHERE d.session_id = s.id) AS documents FROM sessions s {where}"
        " ORDER BY started_at DESC LIMIT ?",
        [*params, limit],
    )
    return [_session_row(row) for row in found]


def session(conn: sqlite3.Connection, session_id: str) -> Row:
    """The `sessions show --json` object for an existing session."""
    calls = rows(
        conn, f"SELECT {_CALL_COLUMNS} FROM calls WHERE session_id = ? ORDER BY seq", [session_id]
    )
    return {
        "session": session_head(conn, session_id),
        "calls": calls,
        "turns": turns(conn, session_id),
    }


def session_head(conn: sqlite3.Connection, session_id: str) -> Row:
    """The session's own row, with its settings parsed and its documents listed."""
    head = _session_row(
        rows(
            conn,
            f"SELECT {_SESSION_COLUMNS}, settings, ran_on, coalesce(stored_chars, 0) AS"
            " stored_chars, coalesce(cut_chars, 0) AS cut_chars FROM sessions s WHERE id = ?",
            [session_id],
        )[0]
    )
    head["settings"] = json.loads(head["settings"]) if head["settings"] else {}
    head["ran_on"] = json.loads(head["ran_on"]) if head["ran_on"] else None
    head["documents"] = [
        {**document, "sections": saved_sections(document["sections"], document["chars"])}
        for document in rows(
            conn,
            "SELECT name, path, size, sha256, chars, tokens, type, sections, attached_to"
            " FROM documents WHERE session_id = ? ORDER BY position",
            [session_id],
        )
    ]
    return head


def saved_sections(saved: str | None, chars: int | None) -> list[dict[str, Any]]:
    """A document's saved sections as a list (what fits in its `chars`, when known)."""
    length = chars if chars is not None else sys.maxsize
    return [section.to_json() for section in sections_from_json(saved, length)]


def turns(conn: sqlite3.Connection, session_id: str) -> list[Row]:
    """Each turn with the model's reply and its cells' code and output joined (cells in order),
    calls in start order."""
    cells: dict[tuple[str, int], list[Row]] = {}
    for cell in rows(
        conn,
        "SELECT call_id, turn, code, stdout, stderr, error, duration_s FROM cells"
        " WHERE session_id = ? ORDER BY call_id, turn, idx",
        [session_id],
    ):
        cells.setdefault((cell["call_id"], cell["turn"]), []).append(cell)
    result = []
    for turn in rows(
        conn,
        "SELECT t.call_id, t.idx, t.duration_s, t.reply, t.unfinished_reply FROM turns t"
        " JOIN calls c"
        " ON c.session_id = t.session_id AND c.id = t.call_id WHERE t.session_id = ?"
        " ORDER BY c.seq, t.idx",
        [session_id],
    ):
        parts = cells.get((turn["call_id"], turn["idx"]), [])
        errors = [part["error"] for part in parts if part["error"]]
        duration = turn["duration_s"]
        result.append(
            {
                "call_id": turn["call_id"],
                "index": turn["idx"],
                "reply": turn["reply"] or turn["unfinished_reply"] or "",
                "code": "\n\n".join(part["code"] or "" for part in parts),
                "stdout": "".join(part["stdout"] or "" for part in parts),
                "stderr": "".join(part["stderr"] or "" for part in parts),
                "error": "\n".join(errors) if errors else None,
                "duration_s": duration
                if duration is not None
                else sum(part["duration_s"] or 0.0 for part in parts),
            }
        )
    return result


def call(conn: sqlite3.Connection, session_id: str, call_id: str) -> Row | None:
    """One call with its texts (its prompt whole, wherever it is kept) and its LLM requests,
    or None."""
    found = rows(conn, "SELECT * FROM calls WHERE session_id = ? AND id = ?", [session_id, call_id])
    if not found:
        return None
    detail = found[0]
    detail["prompt"] = PromptReader(conn, session_id).whole(detail)
    detail["requests"] = rows(
        conn,
        "SELECT * FROM llm_requests WHERE session_id = ? AND call_id = ? ORDER BY sent_at, rowid",
        [session_id, call_id],
    )
    return detail
