"""Watch a database that another process is writing, and kill that process at a chosen moment."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def peek(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """The rows of `sql`, or [] while the writer has not yet created the file or its tables."""
    if not path.exists():
        return []
    conn = sqlite3.connect(path, timeout=5)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def count(path: Path, table: str) -> int:
    """The rows in `table` so far (0 before it exists)."""
    rows = peek(path, f"SELECT count(*) FROM {table}")
    return int(rows[0][0]) if rows else 0


def kill_when(
    process: subprocess.Popen[str],
    ready: Callable[[], bool],
    awaited: str,
    timeout_s: float = 90,
) -> None:
    """Wait until `ready()` while `process` runs, then SIGKILL it (also when the wait fails).

    `awaited` names what `ready` waits for, for the failure messages.
    """
    deadline = time.monotonic() + timeout_s
    try:
        while not ready():
            if process.poll() is not None:
                said = process.stderr.read() if process.stderr else ""
                raise AssertionError(f"the process ended before {awaited}: {said}")
            assert time.monotonic() < deadline, f"timed out waiting for {awaited}"
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL
