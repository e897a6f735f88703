"""A recording process killed with SIGKILL leaves a database that opens cleanly, interrupted."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rlm_desktop.paths import database_path
from rlm_desktop.store import Store
from tests.cli import start_cli
from tests.store.live import count, kill_when


def test_sigkill_mid_run_leaves_an_interrupted_session_with_what_was_written(
    isolated_home: Path,
) -> None:
    path = database_path()
    process = start_cli(
        str(path), home=isolated_home, module="tests.store.crash_writer", stderr=subprocess.PIPE
    )
    kill_when(process, lambda: count(path, "calls") >= 40, "40 calls were written", timeout_s=60)
    seen = count(path, "calls")
    assert seen >= 40

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
        assert len(replayed) == count(path, "events")
        assert [e.ts for e in replayed] == sorted(e.ts for e in replayed)
    finally:
        store.close()
