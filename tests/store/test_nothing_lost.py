"""Text that UTF-8 cannot hold as it is, from a real run, is stored losslessly.

Model code printing a lone surrogate and a document whose file name is not UTF-8 (Latin-1 bytes,
as Linux hands them to Python) once made the writer raise mid-batch: the recorder lost those
events while the run reported `completed`. Now the event log keeps every string exactly (JSON
escapes), the tables show it readably, and nothing is reported lost because nothing is.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from rlm_desktop import paths
from rlm_desktop.documents import LoadOptions, load_paths
from rlm_desktop.engine import ContextDocument, Credentials, Run, RunConfig
from rlm_desktop.engine.events import (
    CellExecuted,
    Event,
    LLMRequestSent,
    LLMResponded,
    RunStarted,
)
from rlm_desktop.store import Recorder, Store
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import Reply, ScriptedServer

SURROGATE_CELL = "print('caf\\udce9', '\\ud800')"
FINAL = repl("FINAL('\\udcff')")
LATIN1_NAME = b"caf\xe9.txt"


def _latin1_file(folder: Path) -> bytes:
    """A file in `folder` named in Latin-1 bytes; returns its path, as bytes."""
    folder.mkdir()
    path = os.path.join(os.fsencode(folder), LATIN1_NAME)
    with open(path, "wb") as file:
        file.write(b"Zebrafish: 7 in tank A.\n")
    return path


async def _run(
    store: Store, server: ScriptedServer, documents: list[ContextDocument]
) -> tuple[Run, Recorder, list[Event]]:
    """A real run over `documents`, recorded by `store`; the recorder is left open."""
    run = Run(
        RunConfig(query="What is here?", model=TEST_MODEL, api_base=server.base_url, mode="rlm"),
        documents,
        folders=paths.engine_folders(),
        credentials=Credentials(api_key="sk-local"),
    )
    seen: list[Event] = []
    run.bus.add_listener(lambda event: seen.append(event) if event.stored else None)
    recorder = store.record(run, documents=documents)
    result = await run.execute()
    assert result.status == "completed"
    return run, recorder, seen


async def _record(
    server: ScriptedServer, documents: list[ContextDocument]
) -> tuple[Store, Run, list[Event], list[str]]:
    store = Store(paths.database_path())
    run, recorder, seen = await _run(store, server, documents)
    recorder.close()
    return store, run, seen, recorder.warnings


async def test_lone_surrogates_from_model_code_are_kept_exactly(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(scripted(root=[repl(SURROGATE_CELL), FINAL]))
    document = ContextDocument(name="notes.txt", text="Zebrafish: 7 in tank A.", path="")
    store, run, seen, warnings = await _record(scripted_server, [document])

    assert warnings == []
    printed = next(e for e in seen if isinstance(e, CellExecuted) and e.turn == 0).stdout
    assert printed == "caf\udce9 \ud800\n"
    assert list(store.replay(run.run_id)) == seen  # every event, every character
    shown = store.session(run.run_id)
    assert shown["session"]["status"] == "completed"
    assert shown["session"]["answer"] == "\\udcff"
    assert shown["turns"][0]["stdout"] == "caf\\udce9 \\ud800\n"
    store.close()


async def test_a_file_name_that_is_not_utf8_keeps_its_bytes(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    original = _latin1_file(folder)
    loaded = load_paths([folder], LoadOptions(model=TEST_MODEL))
    documents = [document.to_context() for document in loaded.documents]
    assert [os.fsencode(d.path) for d in documents] == [original]
    scripted_server.respond_with(scripted(root=[repl("print(context_meta)"), FINAL]))
    store, run, seen, warnings = await _record(scripted_server, documents)

    assert warnings == []
    assert list(store.replay(run.run_id)) == seen
    started = next(e for e in store.replay(run.run_id) if isinstance(e, RunStarted))
    assert os.fsencode(started.documents[0]["path"]) == original
    (row,) = store.session(run.run_id)["session"]["documents"]
    assert os.path.basename(row["path"]) == "caf\ufffd.txt"
    assert row["name"].endswith("caf\ufffd.txt")
    store.close()
    with sqlite3.connect(paths.database_path()) as conn:
        (data,) = conn.execute("SELECT data FROM events WHERE type = 'RunStarted'").fetchone()
    assert "caf\\udce9.txt" in data  # the log holds the name's bytes as JSON escapes
    assert os.fsencode(json.loads(data)["documents"][0]["path"]) == original


def _cap_growth(store: Store) -> None:
    """Let the database grow no further: SQLite then answers the store's writing thread as a
    full disk would."""
    writing = store.writing.connection
    pages = writing.execute("PRAGMA page_count").fetchone()[0]
    writing.execute(f"PRAGMA max_page_count = {pages}")


async def test_a_full_database_keeps_the_events_and_says_so(
    scripted_server: ScriptedServer,
) -> None:
    """Events the database refuses wait in memory: written once there is room, else reported."""
    scripted_server.respond_with(scripted(root=[repl("print('x' * 200_000)"), FINAL]))
    document = ContextDocument(name="notes.txt", text="Zebrafish: 7 in tank A.", path="")
    store = Store(paths.database_path())
    _cap_growth(store)
    run, recorder, seen = await _run(store, scripted_server, [document])
    recorder.flush()  # returns once the database has refused

    (waiting,) = recorder.warnings
    assert "the disk is full" in waiting
    store.writing.connection.execute("PRAGMA max_page_count = 1073741823")  # room again
    recorder.close()
    assert recorder.warnings == []
    assert list(store.replay(run.run_id)) == seen
    assert store.session(run.run_id)["session"]["status"] == "completed"

    scripted_server.respond_with(scripted(root=[repl("print('y' * 200_000)"), FINAL]))
    _cap_growth(store)
    run, recorder, seen = await _run(store, scripted_server, [document])
    recorder.close()
    (lost,) = recorder.warnings
    assert lost.startswith(f"session {run.run_id} was not saved")
    assert "events could not be written" in lost
    assert "the disk is full; free some space" in lost
    (saved,) = store.db.execute(
        "SELECT count(*) FROM events WHERE session_id = ?", [run.run_id]
    ).fetchone()
    assert saved < len(seen)
    statuses = {session["id"]: session["status"] for session in store.list_sessions()}
    assert statuses.get(run.run_id) in (None, "interrupted")  # never `completed`
    store.close()


async def test_absurd_usage_reported_by_a_provider_is_counted_at_the_hold_and_kept_in_words(
    scripted_server: ScriptedServer,
) -> None:
    """2**70 prompt tokens: the ledger counts what the request held (the cap holds whatever the
    provider says), and the figure the provider gave is kept with the reply, in the log too."""
    first = Reply(content=repl("print(1)"), prompt_tokens=2**70)
    scripted_server.respond_with(scripted(root=[first, FINAL]))
    document = ContextDocument(name="notes.txt", text="Zebrafish: 7 in tank A.", path="")
    store, run, seen, warnings = await _record(scripted_server, [document])

    assert warnings == []
    assert list(store.replay(run.run_id)) == seen
    responded = [e for e in seen if isinstance(e, LLMResponded)]
    (sent, *_) = [e for e in seen if isinstance(e, LLMRequestSent)]
    assert responded[0].input_tokens == sent.reserved_tokens - sent.reserved_output_tokens
    assert f"reported {2**70:,} input tokens" in (responded[0].stopped_early or "")
    (root, *_) = store.session(run.run_id)["calls"]
    assert root["input_tokens"] < 2**20
    store.close()
