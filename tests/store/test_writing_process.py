"""A big run's events are written by the store's writing process (`events_process.py`).

Past `PROCESS_AFTER` events a session's writer moves out of the app, with what it knew: the
database it leaves is the one the thread alone writes, row for row, long prompts held back across
the move included. Its secrets stay scrubbed; Ctrl-C does not stop it; and when it dies, the run
says what was not saved, the session ends `interrupted`, and the next run is saved in full.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

import psutil
import pytest

from rlm_desktop import paths
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.events import Event, LLMRequestSent, LLMResponded, TurnStarted
from rlm_desktop.store import Recorder, Store
from rlm_desktop.store.documents_beside import DocumentsBeside
from rlm_desktop.store.liveness import current_writer
from rlm_desktop.store.recorder import PROCESS_AFTER
from rlm_desktop.store.redact import Redactor
from rlm_desktop.store.writer import SessionWriter, session_row
from rlm_desktop.store.writing_connection import immediate_transaction
from tests.small_disk import fill, small_disk
from tests.store.test_secrets import assert_not_in_files
from tests.synthetic_events import (
    FakeRun,
    answered,
    call_finished,
    call_started,
    exchange,
    restamp,
    run_finished,
    run_started,
)

API_KEY = "sk-live-5f4e3d2c1b0a99887766"
CALLS = 2_500
"""Sub-calls of the fan-out: 4 events each, several times `PROCESS_AFTER`."""
LONG = 20_000
"""A long prompt (held back until sent, then kept as the document's span it repeats)."""
TABLES = {
    "events": "seq", "calls": "seq", "llm_requests": "id", "turns": "call_id, idx",
    "documents": "position",
}  # fmt: skip


def _document() -> ContextDocument:
    words = random.Random(7).choices(["zebrafish", "tank", "count", "seven", "notes"], k=40_000)
    text = " ".join(f"{word}{n}" for n, word in enumerate(words))
    return ContextDocument(name="notes.txt", text=text, path="")


def _prompt(number: int, document: str) -> str:
    if number % 3 == 0:
        return document[number * 31 : number * 31 + LONG]
    if number % 3 == 1:
        return f"question {number}: is {API_KEY} the key?"
    return f"question {number}"


def _fan_out(run_id: str, document: str, reply_chars: int = 0) -> list[Event]:
    """A root call whose one turn starts `CALLS` sub-calls, sends them all, then answers them:
    long prompts are held back on one side of the move and sent on the other. The second half's
    replies are padded to `reply_chars`."""
    events: list[Event] = [
        run_started(
            run_id, query="How many zebrafish?", mode="rlm", settings={},
            documents=[{"name": "notes.txt", "path": "", "chars": len(document), "tokens": 9}],
        ),
        call_started(run_id, "c0", None, kind="rlm", depth=0, prompt="How many zebrafish?"),
        TurnStarted(run_id=run_id, call_id="c0", index=0),
    ]  # fmt: skip
    events += [
        call_started(run_id, f"s{n}", "c0", prompt=_prompt(n, document)) for n in range(CALLS)
    ]
    events += [
        LLMRequestSent(
            run_id=run_id,
            call_id=f"s{n}",
            request_id=f"q{n}",
            model="m",
            messages=1,
            reserved_tokens=100,
        )  # fmt: skip
        for n in range(CALLS)
    ]
    for n in range(CALLS):
        reply = f"seven, says {API_KEY}" if n % 5 == 0 else "seven"
        if n >= CALLS // 2:
            reply = reply.ljust(reply_chars, ".")
        events.append(
            LLMResponded(
                run_id=run_id, call_id=f"s{n}", request_id=f"q{n}", model="m", content=reply,
                input_tokens=10, output_tokens=2, cost_usd=0.0, latency_s=0.1,
                finish_reason="stop", truncated=False, attempts=1,
            )
        )  # fmt: skip
        events.append(call_finished(run_id, f"s{n}", response=reply, input_tokens=10))
    events.append(TurnStarted(run_id=run_id, call_id="c0", index=1))  # its requests: turn 1
    events += exchange(
        run_id, "c0", "r1", 0.0, content="FINAL('7')", messages=3, reserved_tokens=100,
        input_tokens=1, output_tokens=1, cost_usd=0.0, latency_s=0.1,
    )  # fmt: skip
    events += answered(run_id, "c0", 0.0, "7", input_tokens=1, output_tokens=1, cost_usd=0.0)
    events.append(
        run_finished(
            run_id, answer="7", cost_usd=0.0, input_tokens=1, output_tokens=1, turns=1,
            sub_calls=CALLS, max_depth_reached=1, wall_s=1.0,
        )
    )  # fmt: skip
    return list(restamp(events, 1_700_000_000.0))


def _written_by_the_thread(
    path: Path, run_id: str, document: ContextDocument, events: list[Event]
) -> None:
    """The database the writing thread alone leaves: the documents, then every event through
    one `SessionWriter`, a thousand a transaction."""
    store = Store(path)
    connection = store.writing.connection
    redactor = Redactor.for_run(API_KEY)
    beside = DocumentsBeside(run_id, [document], redactor)
    writer = SessionWriter(connection, run_id, redactor)
    with immediate_transaction(connection):
        writer.begin(session_row(run_id, current_writer()))
        chunk = beside.store_chunk(connection)
    beside.committed(chunk)
    writer.documents_stored(beside.texts)
    stored = [event for event in events if event.stored]
    for start in range(0, len(stored), 1000):
        with immediate_transaction(connection):
            writer.write(stored[start : start + 1000])
    store.close()


def _rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(path) as conn:
        found = {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
            for table, order in TABLES.items()
        }
        found["texts"] = conn.execute("SELECT * FROM texts ORDER BY sha256").fetchall()
        found["sessions"] = conn.execute(
            "SELECT status, answer, sub_calls, stored_chars, cut_chars FROM sessions"
        ).fetchall()
    conn.close()
    return found


def _record(store: Store, run_id: str, document: ContextDocument) -> tuple[Recorder, EventBus]:
    bus = EventBus()
    return store.record(FakeRun(run_id, bus), documents=[document], secrets=[API_KEY]), bus


def _publish(bus: EventBus, events: Sequence[Event]) -> None:
    for event in events:
        bus.publish(event)


def _live(recorder: Recorder, bus: EventBus, events: Sequence[Event]) -> None:
    """Publish `events` as a run does, over time: all but the run's end first, written, then
    the end (a session that has ended is not moved)."""
    _publish(bus, events[:-1])
    recorder.flush()
    _publish(bus, events[-1:])


def test_the_process_leaves_the_database_the_thread_would(isolated_home: Path) -> None:
    document = _document()
    events = _fan_out("run-big", document.text)
    assert sum(event.stored for event in events) > 2 * PROCESS_AFTER
    _written_by_the_thread(isolated_home / "thread.db", "run-big", document, events)

    store = Store(paths.database_path())
    recorder, bus = _record(store, "run-big", document)
    _live(recorder, bus, events)
    recorder.close()
    moved = store.writing.process.cpu_seconds
    store.close()

    assert recorder.warnings == []
    assert moved > 0  # the process wrote (it reports the CPU its answers took)
    by_process, by_thread = _rows(paths.database_path()), _rows(isolated_home / "thread.db")
    assert by_process["sessions"][0][:3] == ("completed", "7", CALLS)
    for table in (*TABLES, "texts", "sessions"):
        assert by_process[table] == by_thread[table], table
    with sqlite3.connect(paths.database_path()) as conn:
        spans = conn.execute("SELECT count(*) FROM calls WHERE prompt_document = 0").fetchone()
    conn.close()
    assert spans == (
        len(range(0, CALLS, 3)),
    )  # every long prompt kept as the span of the document it repeats
    assert_not_in_files(isolated_home, (API_KEY,))


def test_a_killed_writing_process_is_reported_and_the_next_run_is_saved(
    isolated_home: Path,
) -> None:
    document = _document()
    events = _fan_out("run-killed", document.text)
    store = Store(paths.database_path())
    recorder, bus = _record(store, "run-killed", document)
    half = len(events) // 2
    _publish(bus, events[:half])
    recorder.flush()
    pid = store.writing.process.pid
    assert pid is not None
    assert pid != os.getpid()
    written = store.db.execute("SELECT count(*) FROM events").fetchone()[0]
    assert written == sum(event.stored for event in events[:half])
    psutil.Process(pid).kill()

    _publish(bus, events[half:])
    recorder.close()
    (warning,) = recorder.warnings
    assert warning.startswith("session run-killed was not saved in full:"), warning
    assert "events could not be written" in warning
    assert "the store's writing process stopped (signal 9)" in warning
    assert store.db.execute("SELECT count(*) FROM events").fetchone()[0] == written
    assert store.session("run-killed")["session"]["status"] == "interrupted"

    again = _fan_out("run-again", document.text)
    recorder, bus = _record(store, "run-again", document)
    _live(recorder, bus, again)
    recorder.close()
    assert recorder.warnings == []
    assert len(list(store.replay("run-again"))) == sum(event.stored for event in again)
    assert store.session("run-again")["session"]["status"] == "completed"
    assert store.writing.process.pid not in (None, pid)
    store.close()


@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C is sent as SIGINT on POSIX")
def test_ctrl_c_does_not_stop_the_writing_process(isolated_home: Path) -> None:
    """Ctrl-C in a terminal reaches every process of the app's group: the app stops its run on
    it and writes the run's end, which the writing process must still be there to write."""
    document = _document()
    events = _fan_out("run-interrupted", document.text)
    store = Store(paths.database_path())
    recorder, bus = _record(store, "run-interrupted", document)
    _publish(bus, events[: len(events) // 2])
    recorder.flush()
    pid = store.writing.process.pid
    assert pid is not None
    os.kill(pid, signal.SIGINT)
    _publish(bus, events[len(events) // 2 :])
    recorder.close()
    assert recorder.warnings == []
    assert store.session("run-interrupted")["session"]["status"] == "completed"
    assert store.writing.process.pid == pid
    store.close()


def test_a_full_disk_under_the_writing_process_loses_nothing_once_there_is_room(
    isolated_home: Path,
) -> None:
    """The process's refusals come back as the database's own ("the disk is full"): what it
    could not write waits, and is written once the disk has room again."""
    document = _document()
    events = _fan_out("run-full", document.text, reply_chars=1_000)
    with small_disk(isolated_home, 32 * 1024 * 1024):
        store = Store(paths.database_path())
        recorder, bus = _record(store, "run-full", document)
        half = next(n for n, event in enumerate(events) if len(getattr(event, "content", "")) > 100)
        _publish(bus, events[:half])
        recorder.flush()
        assert store.writing.process.pid is not None
        filler = fill(isolated_home)
        _publish(bus, events[half:])
        recorder.flush()  # returns once the database has refused
        (waiting,) = recorder.warnings
        assert "the disk is full" in waiting, waiting
        filler.unlink()
        recorder.close()
        assert recorder.warnings == []
        assert len(list(store.replay("run-full"))) == sum(event.stored for event in events)
        assert store.session("run-full")["session"]["status"] == "completed"
        store.close()
