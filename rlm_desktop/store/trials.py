"""Evaluation trials among the saved sessions: the runs `rlm-desktop eval` and the evaluation
page start, which are not an analyst's own questions.

A trial carries two marks: its settings hold the `evaluation_id` it was run for (`RunConfig`),
and the evaluation harness tags it in its own table before it starts. Either makes a session a
trial (a trial killed before its first event has only the tag; one whose evaluation was deleted,
only the setting).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rlm_desktop.store.queries import Row, sessions_with_ids

if TYPE_CHECKING:
    from rlm_desktop.store.store import Store


EVALUATION_TRIALS = "evaluation_sessions"
"""The table the evaluation harness tags its trials in."""
BATCH_ROWS = "batch_sessions"
"""The table `rlm-desktop batch` tags its rows' sessions in: hidden like trials (a batch of
2,000 questions would bury the analyst's own)."""


def trial_condition(conn: sqlite3.Connection) -> str:
    """The SQL condition, on a row of `sessions`, that the session is an evaluation trial (or
    a batch's row)."""
    tagging = [
        table
        for table in (EVALUATION_TRIALS, BATCH_ROWS)
        if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table]
        ).fetchone()
    ]
    by_setting = (
        "(settings IS NOT NULL AND json_valid(settings)"
        " AND json_extract(settings, '$.evaluation_id') IS NOT NULL)"
    )
    tagged = [f"id IN (SELECT session_id FROM {table})" for table in tagging]
    return f"({' OR '.join([*tagged, by_setting])})"


@dataclass(frozen=True)
class Listing:
    """Saved sessions as the session browser lists them, and the trials it left out."""

    rows: list[Row]
    """Listing rows (as `Store.list_sessions` gives them), newest first."""
    hidden_trials: int
    """Evaluation trials not among `rows` because they were left out."""
    trials: frozenset[str]
    """The ids of the trials among `rows`."""


def list_sessions(store: Store, *, trials: bool, limit: int = 200) -> Listing:
    """The newest `limit` saved sessions, evaluation trials among them only if `trials`."""
    store.reap_dead_writers()
    with store.lock:
        conn = store.db.conn
        trial = trial_condition(conn)
        where = "" if trials else f"WHERE NOT {trial}"
        ids = [
            str(found)
            for (found,) in conn.execute(
                f"SELECT id FROM sessions {where} ORDER BY started_at DESC LIMIT ?", [limit]
            )
        ]
        listed = sessions_with_ids(conn, ids)
        hidden = 0 if trials else _count(conn, trial)
        marked = _trials_among(conn, trial, ids) if trials else frozenset()
    return Listing(listed, hidden, marked)


def without_trials(store: Store, rows: Sequence[Row], *, trials: bool) -> Listing:
    """`rows` (a search's) less the evaluation trials among them unless `trials`."""
    ids = [str(row["id"]) for row in rows]
    with store.lock:
        conn = store.db.conn
        marked = _trials_among(conn, trial_condition(conn), ids)
    if trials:
        return Listing(list(rows), 0, marked)
    kept = [row for row in rows if row["id"] not in marked]
    return Listing(kept, len(rows) - len(kept), frozenset())


def _count(conn: sqlite3.Connection, trial: str) -> int:
    (count,) = conn.execute(f"SELECT count(*) FROM sessions WHERE {trial}").fetchone()
    return int(count)


def _trials_among(conn: sqlite3.Connection, trial: str, ids: Sequence[str]) -> frozenset[str]:
    if not ids:
        return frozenset()
    found = conn.execute(
        f"SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?)) AND {trial}",
        [json.dumps(list(ids))],
    ).fetchall()
    return frozenset(str(session_id) for (session_id,) in found)
