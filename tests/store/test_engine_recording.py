"""End to end: the real engine, talking to the scripted server, recorded by the store."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from rlm_desktop.engine.events import Event
from rlm_desktop.exports import FORMATS, export, export_bytes
from rlm_desktop.paths import database_path
from rlm_desktop.store import Store
from tests.cli import start_cli
from tests.scripted_server import ScriptedServer
from tests.store.engine_script import API_KEY, DOCUMENT, MARKER, make_run, responder
from tests.store.live import count, kill_when, peek


async def test_a_real_run_is_recorded_as_it_happened(
    scripted_server: ScriptedServer, isolated_home: Path
) -> None:
    scripted_server.respond_with(responder())
    run = make_run(scripted_server)
    seen: list[Event] = []
    run.bus.add_listener(lambda event: seen.append(event) if event.stored else None)
    store = Store(database_path())
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
    places = {(hit["field"], hit["turn"], hit["cell"]) for hit in store.search(MARKER)}
    assert places == {("code", 0, 1), ("stdout", 0, 1), ("reply", 0, None)}
    assert store.document_texts(run.run_id) == [(DOCUMENT.name, DOCUMENT.text)]
    exports = [
        export_bytes(store, run.run_id, fmt, include_content=True).decode("utf-8", "replace")
        for fmt in FORMATS
    ]
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


CALLS = "SELECT kind, status FROM calls ORDER BY seq"


def test_a_run_killed_mid_turn_is_interrupted_with_its_finished_work(
    isolated_home: Path,
) -> None:
    path = database_path()
    process = start_cli(
        str(path), home=isolated_home, module="tests.store.engine_script", stderr=subprocess.PIPE
    )
    # The second turn's request stalls on the server: kill it once the first turn is kept.
    kill_when(
        process,
        lambda: (
            peek(path, CALLS) == [("rlm", "running"), ("llm", "ok")] and count(path, "cells") > 0
        ),
        "the first turn was written",
    )

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
