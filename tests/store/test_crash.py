"""A recording process killed with SIGKILL leaves a database that opens cleanly, interrupted."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from rlm_desktop.paths import database_path
from rlm_desktop.store import Store

ROOT = Path(__file__).resolve().parents[2]


def _count(path: Path, sql: str) -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=5)
    try:
        return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def _wait_for_calls(path: Path, at_least: int, process: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        seen = _count(path, "SELECT count(*) FROM calls")
        if seen >= at_least:
            return seen
        time.sleep(0.05)
    raise AssertionError(f"the writer never wrote {at_least} calls")


def test_sigkill_mid_run_leaves_an_interrupted_session_with_what_was_written() -> None:
    path = database_path()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.store.crash_writer", str(path)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
    )
    try:
        seen = _wait_for_calls(path, 40, process)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL

    store = Store(path)
    try:
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        shown = store.session("killed-run")
        assert shown["session"]["status"] == "interrupted"
        assert len(shown["calls"]) >= seen
        assert shown["calls"][0]["status"] == "interrupted"
        assert {c["status"] for c in shown["calls"][1:-1]} == {"ok"}
        assert shown["session"]["sub_calls"] == len(shown["calls"]) - 1
        replayed = list(store.replay("killed-run"))
        assert len(replayed) == _count(path, "SELECT count(*) FROM events")
        assert [e.ts for e in replayed] == sorted(e.ts for e in replayed)
    finally:
        store.close()
