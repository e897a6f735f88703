"""A stored evaluation or batch given a crafted id, as a shared sessions.db could hold it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

RECORDS = {
    "evaluation": ("evaluations", ("evaluation_sessions", "evaluation_results"), "evaluation_id"),
    "batch": ("batches", ("batch_sessions", "batch_results"), "batch_id"),
}


def rename_stored(home: Path, kind: str, new_id: str) -> str:
    """Give the one stored `kind` ("evaluation" or "batch") the id `new_id`, in its own table and
    in those that name it; returns the id it had."""
    table, others, column = RECORDS[kind]
    with sqlite3.connect(home / "sessions.db") as db:
        ((old,),) = db.execute(f"SELECT id FROM {table}").fetchall()
        db.execute(f"UPDATE {table} SET id = ? WHERE id = ?", [new_id, old])
        for other in others:
            db.execute(f"UPDATE {other} SET {column} = ? WHERE {column} = ?", [new_id, old])
    return str(old)


def victim_folder(root: Path) -> Path:
    """A folder of the user's with a file of theirs named like a results file."""
    folder = root / "Documents"
    folder.mkdir()
    (folder / "summary.csv").write_text("the user's own figures\n")
    return folder
