"""Reading what a batch left in the sessions database the CLI wrote."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def query(home: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows of `sql` in the sessions database of `home` (none when a table is not made yet)."""
    path = home / "sessions.db"
    if not path.exists():
        return []
    try:
        with sqlite3.connect(path) as db:
            return list(db.execute(sql, params).fetchall())
    except sqlite3.OperationalError as error:
        if "no such table" in str(error):
            return []
        raise


def finished_rows(home: Path) -> dict[str, str]:
    """`{row_id: session_id}` of the rows with a saved result, of any batch."""
    return {
        row: session for row, session in query(home, "SELECT row_id, session_id FROM batch_results")
    }


def completed_sessions(home: Path) -> dict[str, int]:
    """How many completed sessions each row's tag has."""
    rows = query(
        home,
        "SELECT b.row_id, COUNT(*) FROM batch_sessions b JOIN sessions s ON s.id = b.session_id "
        "WHERE s.status = 'completed' GROUP BY b.row_id",
    )
    return dict(rows)
