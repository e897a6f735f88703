"""The connections that write runs, and the one way their transactions begin."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def writing_connection(path: Path) -> sqlite3.Connection:
    """A connection that writes runs to the database at `path` (autocommit: each transaction
    is begun by `immediate_transaction`), usable from any one thread at a time."""
    connection = sqlite3.connect(
        str(path), timeout=30.0, isolation_level=None, check_same_thread=False
    )
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA foreign_keys=ON")
    return connection


@contextmanager
def immediate_transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """`connection` inside one transaction, taken for writing as it begins (`BEGIN IMMEDIATE`):
    a transaction begun for reading first would be refused at once ("database is locked") when
    it came to write after another connection had committed, not made to wait its turn."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
        if connection.in_transaction:
            connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:  # SQLite may have rolled it back itself
            connection.execute("ROLLBACK")
        raise
