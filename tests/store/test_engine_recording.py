"""End to end: the real engine, talking to the scripted server, recorded by the store."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from rlm_desktop.engine.events import Event
from rlm_desktop.paths import database_path
from rlm_desktop.store import FORMATS, Store, export
from tests.scripted_server import ScriptedServer
from tests.store.engine_script import API_KEY, DOCUMENT, MARKER, make_run, responder

ROOT = Path(__file__).resolve().parents[2]


async def test_a_real_run_is_recorded_as_it_happened(
    scripted_server: ScriptedServer, isolated_home: Path
) -> None:
    scripted_server.respond_with(responder())
    run = make_run(scripted_server)
    seen: list[Event] = []
    run.bus.add_listener(seen.append)
    store = Store()
    recorder = store.record(run, documents=[DOCUMENT])
    result = await run.execute()
    recorder.close()

    assert result.status == "completed"
    assert list(store.replay(run.run_id)) == seen
    shown = store.session(run.run_id)
    session = shown["session"]
    assert (session["status"], session["answer"], session["turns"]) == (
        "completed",
        result.answer,
        result.turns,
    )
    root, sub = shown["calls"]
    assert (root["kind"], root["parent_id"], sub["kind"], sub["parent_id"]) == (
        "rlm",
        None,
        "llm",
        root["id"],
    )
    assert sub["status"] == "ok"
    assert MARKER in shown["turns"][0]["stdout"]
    assert [hit["field"] for hit in store.search(MARKER)] == ["code"]
    assert store.document_texts(run.run_id) == [(DOCUMENT.name, DOCUMENT.text)]
    exports = [export(store, run.run_id, fmt, include_content=True) for fmt in FORMATS]
    store.close()

    # The key really was sent, and was never written.
    headers = scripted_server.headers
    sent = {v for h in headers for k, v in h.items() if k.lower() == "authorization"}
    assert f"Bearer {API_KEY}" in sent
    assert not _files_containing(isolated_home, API_KEY)
    for text in exports:
        assert API_KEY not in text


def _files_containing(folder: Path, secret: str) -> list[str]:
    files = list(folder.glob("sessions.db*"))
    assert files
    return [path.name for path in files if secret.encode() in path.read_bytes()]


def _calls(path: Path) -> list[tuple[str, str]]:
    if not path.exists():
        return []
    conn = sqlite3.connect(path, timeout=5)
    try:
        return conn.execute("SELECT kind, status FROM calls ORDER BY seq").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def test_a_run_killed_mid_turn_is_interrupted_with_its_finished_work() -> None:
    path = database_path()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.store.engine_script", str(path)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 90
    try:
        # The second turn's request stalls on the server: wait until the first turn is kept.
        while _calls(path) != [("rlm", "running"), ("llm", "ok")] or not _cells(path):
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "the first turn was never written"
            time.sleep(0.05)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()

    store = Store(path)
    try:
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        (session,) = store.list_sessions()
        shown = store.session(session["id"])
        assert shown["session"]["status"] == "interrupted"
        assert [(c["kind"], c["status"]) for c in shown["calls"]] == [
            ("rlm", "interrupted"),
            ("llm", "ok"),
        ]
        assert MARKER in shown["turns"][0]["stdout"]
        lines = export(store, session["id"], "jsonl").splitlines()
        assert json.loads(lines[1])["code_blocks"][0]["result"]["rlm_calls"][0]["response"] == "7"
    finally:
        store.close()


def _cells(path: Path) -> int:
    conn = sqlite3.connect(path, timeout=5)
    try:
        return int(conn.execute("SELECT count(*) FROM cells").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()
