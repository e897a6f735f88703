"""Documents stored beside the run by the store's writing thread, known again on a second run, and
a disk that fills while they are stored (issue #45)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from pathlib import Path

from rlm_desktop import paths
from rlm_desktop.engine import ContextDocument, Credentials, Run, RunConfig
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.events import Event, LLMRequestSent
from rlm_desktop.store import Store
from rlm_desktop.store.documents_beside import CHUNK_CHARS
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.store.synthetic import FakeRun, run_events

SECRET = "sk-run-secret-0123456789"


def _folder(tmp_path: Path, count: int, chars: int) -> list[ContextDocument]:
    """`count` files of `chars` characters, last modified an hour ago, as the loader gives them."""
    folder = tmp_path / "folder"
    folder.mkdir(exist_ok=True)
    documents = []
    for number in range(count):
        path = folder / f"report-{number:03}.txt"
        text = f"report {number}\n" + "x" * (chars - 12)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (time.time() - 3600, time.time() - 3600))
        documents.append(ContextDocument(name=path.name, text=text, path=str(path)))
    return documents


def _count(table: str) -> int:
    with sqlite3.connect(paths.database_path()) as other:
        return int(other.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


async def test_events_are_written_while_the_runs_loop_is_busy(store: Store) -> None:
    """The loop only hands events over: they reach the database while it computes on."""
    run = FakeRun("busy-loop", EventBus())
    recorder = store.record(run)
    for event in list(run_events("busy-loop", turns=1, calls_per_turn=3, finish=False))[:4]:
        run.bus.publish(event)
    time.sleep(0.5)  # noqa: ASYNC251 -- the loop is held on purpose: no timer of it can run
    try:
        assert _count("events") == 4
    finally:
        recorder.close()
    await asyncio.sleep(0)


async def test_a_run_stopped_at_its_first_request_keeps_every_document(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """More text than one transaction stores: the run is not kept waiting for it, and stopping
    the run at its first request still leaves the session with every document."""
    documents = _folder(tmp_path, 24, CHUNK_CHARS // 8)
    scripted_server.respond_with(scripted(root=[repl("print(len(context))"), repl("FINAL('x')")]))
    run = Run(
        RunConfig(query="What is here?", model=TEST_MODEL, api_base=scripted_server.base_url),
        documents,
        folders=paths.engine_folders(),
        credentials=Credentials(api_key="sk-local"),
    )
    store = Store(paths.database_path())
    recorder = store.record(run, documents=documents)

    def stop_at_first_request(event: Event) -> None:
        if isinstance(event, LLMRequestSent):
            run.cancel()

    run.bus.add_listener(stop_at_first_request)
    result = await run.execute()
    recorder.close()
    assert result.status == "cancelled"
    assert recorder.warnings == []
    assert store.document_texts(run.run_id) == [(d.name, d.text) for d in documents]
    assert store.session(run.run_id)["session"]["status"] in ("cancelled", "interrupted")
    store.close()


def test_a_second_run_over_the_same_folder_knows_its_files_again(
    store: Store, tmp_path: Path
) -> None:
    """Neither hashed nor inserted again; a file that holds this run's secret is not taken from
    the cache but scrubbed, and a file that changed is stored anew."""
    documents = _folder(tmp_path, 5, 3000)
    assert _record(store, "first", documents) == 0
    texts = _count("texts")

    assert _record(store, "second", documents) == len(documents)
    assert _count("texts") == texts
    assert store.document_texts("second") == [(d.name, d.text) for d in documents]

    changed = Path(documents[1].path)
    changed.write_text(documents[1].text.replace("report", "REPORT"), encoding="utf-8")
    os.utime(changed, (time.time() - 60, time.time() - 60))
    documents[1] = ContextDocument(documents[1].name, changed.read_text(), str(changed))
    secret = documents[3].text[:40]
    assert _record(store, "third", documents, (secret,)) == len(documents) - 2
    assert store.document_texts("third")[1][1].startswith("REPORT 1")
    kept = store.document_texts("third")[3][1]
    assert secret not in kept
    assert kept.startswith("[redacted]")


def _record(
    store: Store, run_id: str, documents: list[ContextDocument], secrets: tuple[str, ...] = ()
) -> int:
    """Record a whole synthetic run over `documents`; returns how many were known again."""
    run = FakeRun(run_id, EventBus())
    recorder = store.record(run, documents=documents, secrets=secrets)
    for event in run_events(run_id):
        run.bus.publish(event)
    recorder.close()
    assert recorder.warnings == []
    return recorder.documents_known_again


def test_a_disk_that_fills_while_documents_are_stored_loses_no_session(
    store: Store, tmp_path: Path
) -> None:
    """The database stops growing halfway through the documents: the run's session stays
    readable, ends with a clear status, and the run is told what was not stored."""
    documents = _folder(tmp_path, 12, CHUNK_CHARS // 2)
    writing = store.writing.connection
    pages = writing.execute("PRAGMA page_count").fetchone()[0]
    writing.execute(f"PRAGMA max_page_count = {pages + 2 * CHUNK_CHARS // 4096}")
    run = FakeRun("filled", EventBus())
    recorder = store.record(run, documents=documents, secrets=[SECRET])
    for event in run_events("filled", turns=2, calls_per_turn=2):
        run.bus.publish(event)
    recorder.close()

    (warning,) = recorder.warnings
    assert "documents could not be stored" in warning
    assert "the disk is full" in warning
    shown = store.session("filled")
    assert shown["session"]["status"] in ("completed", "interrupted")
    assert len(shown["calls"]) == 5
    kept = store.document_texts("filled")
    assert 0 < len(kept) < len(documents)
    assert kept == [(d.name, d.text) for d in documents[: len(kept)]]
    assert list(store.replay("filled"))
