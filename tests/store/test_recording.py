"""Recording a run through the bus and reading it back: tree, turns, replay, documents."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Callable

import pytest

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.engine.events import CallStarted, CellExecuted, RunFinished
from rlm_desktop.paths import database_path
from rlm_desktop.store import Recorder, SessionBusy, SessionNotFound, Store, StoreError
from rlm_desktop.store.recorder import MAX_BUFFER, MAX_DEFERRED
from tests.store.conftest import DOCUMENT
from tests.store.synthetic import ANSWER, FakeRun, run_events


def test_a_recorded_run_reads_back_as_the_same_tree_and_turns(
    store: Store, record_run: Callable[..., str]
) -> None:
    events = list(run_events("run-1", turns=3, calls_per_turn=4, child_every=3))
    record_run("run-1", turns=3, calls_per_turn=4, child_every=3)
    shown = store.session("run-1")

    started = [e for e in events if isinstance(e, CallStarted)]
    assert [(c["id"], c["parent_id"], c["kind"], c["depth"]) for c in shown["calls"]] == [
        (e.call_id, e.parent_id, e.kind, e.depth) for e in started
    ]
    assert {c["status"] for c in shown["calls"]} == {"ok"}
    order = {e.call_id: n for n, e in enumerate(started)}
    cells = sorted(
        (e for e in events if isinstance(e, CellExecuted)), key=lambda e: (order[e.call_id], e.turn)
    )
    assert [(t["call_id"], t["index"], t["code"], t["stdout"]) for t in shown["turns"]] == [
        (c.call_id, c.turn, c.code, c.stdout) for c in cells
    ]
    session = shown["session"]
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert session["status"] == "completed"
    assert session["answer"] == ANSWER
    assert (session["cost_usd"], session["turns"], session["sub_calls"]) == (
        finished.cost_usd,
        finished.turns,
        finished.sub_calls,
    )
    assert session["settings"]["budget"]["max_depth"] == 2


def test_show_json_has_exactly_the_documented_keys(
    store: Store, record_run: Callable[..., str]
) -> None:
    shown = store.session(record_run())
    assert set(shown) == {"session", "calls", "turns"}
    assert set(shown["calls"][0]) == {
        "id",
        "parent_id",
        "kind",
        "depth",
        "model",
        "status",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "started_at",
        "ended_at",
        "error",
    }
    assert set(shown["turns"][0]) == {
        "call_id",
        "index",
        "code",
        "stdout",
        "stderr",
        "error",
        "duration_s",
        "reply",
    }


def test_replay_yields_the_published_events_in_order(
    store: Store, record_run: Callable[..., str]
) -> None:
    record_run("run-1", turns=2, calls_per_turn=3, child_every=2)
    assert list(store.replay("run-1", chunk=7)) == list(
        run_events("run-1", turns=2, calls_per_turn=3, child_every=2)
    )


def test_sub_calls_know_the_cell_that_made_them(
    store: Store, record_run: Callable[..., str]
) -> None:
    record_run("run-1", turns=2, calls_per_turn=2)
    placed = store.db.execute(
        "SELECT id, parent_turn, parent_cell FROM calls WHERE parent_id = 'c0' ORDER BY seq"
    ).fetchall()
    assert placed == [("c1", 0, 0), ("c2", 0, 0), ("c3", 1, 0), ("c4", 1, 0)]


def test_a_documents_text_is_kept_once_and_survives_the_file(
    store: Store, record_run: Callable[..., str]
) -> None:
    record_run("run-1")
    record_run("run-2")
    assert store.document_texts("run-2") == [(DOCUMENT.name, DOCUMENT.text)]
    assert store.db.execute("SELECT count(*) FROM texts").fetchone()[0] == 1
    document = store.session("run-1")["session"]["documents"][0]
    assert (document["name"], document["chars"], document["tokens"]) == ("notes.txt", 23, 3)
    assert len(document["sha256"]) == 64


def test_delete_removes_the_session_and_orphaned_texts(
    store: Store, record_run: Callable[..., str]
) -> None:
    record_run("run-1")
    record_run("run-2")
    store.delete("run-1")
    assert [s["id"] for s in store.list_sessions()] == ["run-2"]
    assert store.db.execute("SELECT count(*) FROM texts").fetchone()[0] == 1
    store.delete("run-2")
    for table in ("texts", "documents", "calls", "turns", "cells", "events", "llm_requests"):
        assert store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
    assert store.search("zebrafishcount") == []
    with pytest.raises(SessionNotFound):
        store.session("run-1")


def test_ids_resolve_by_unique_prefix(store: Store, record_run: Callable[..., str]) -> None:
    record_run("abc-123")
    record_run("abd-456")
    assert store.session("abc")["session"]["id"] == "abc-123"
    with pytest.raises(SessionNotFound, match="more than one"):
        store.session("ab")
    with pytest.raises(SessionNotFound, match="sessions list"):
        store.session("zzz")
    with pytest.raises(SessionNotFound):
        store.session("a%")


def test_search_finds_words_from_cells_queries_and_answers(
    store: Store, record_run: Callable[..., str]
) -> None:
    record_run("run-1")
    hits = store.search("zebrafishcount")
    assert {(h["session_id"], h["field"], h["call_id"]) for h in hits} == {
        ("run-1", "code", "c0"),
        ("run-1", "stdout", "c0"),
        ("run-1", "reply", "c0"),
    }
    assert all("[zebrafishcount]" in hit["snippet"] for hit in hits)
    assert {h["field"] for h in store.search("zebrafish")} >= {"query"}
    assert [h["field"] for h in store.search("answer 42")] == ["answer"]
    assert store.search('"); DROP TABLE sessions; --') == []
    assert [s["id"] for s in store.list_sessions(search="zebrafishcount")] == ["run-1"]
    assert store.list_sessions(search="platypus") == []


async def test_a_live_run_is_flushed_on_the_loops_timer_without_waiting_for_the_end(
    store: Store,
) -> None:
    run = FakeRun("live", EventBus())
    recorder = store.record(run)
    for event in run_events("live", turns=1, calls_per_turn=5, finish=False):
        run.bus.publish(event)
    other = sqlite3.connect(database_path())
    try:
        await asyncio.sleep(0.3)
        written = other.execute("SELECT count(*) FROM calls WHERE session_id = 'live'")
        assert written.fetchone()[0] == 6
    finally:
        other.close()
        recorder.close()


async def test_a_burst_is_written_once_it_pauses_in_transactions(store: Store) -> None:
    """Events published back to back (a fan-out's requests going out) are gathered, then go to
    the database by the store's writing thread in transactions of at most `MAX_BUFFER` events,
    none lost."""
    run = FakeRun("burst", EventBus())
    recorder = store.record(run)
    events = list(run_events("burst", turns=1, calls_per_turn=100, finish=False))[:-1]
    assert len(events) < MAX_DEFERRED
    for event in events:
        run.bus.publish(event)
    assert recorder.events_written == 0  # nothing written while events pour in
    other = sqlite3.connect(database_path())
    try:
        for _ in range(100):
            await asyncio.sleep(0.01)
            if recorder.events_written == len(events):
                break
        (logged,) = other.execute(
            "SELECT count(*) FROM events WHERE session_id = 'burst'"
        ).fetchone()
        assert logged == len(events)
        assert recorder.flushes >= len(events) / MAX_BUFFER
    finally:
        other.close()
        recorder.close()


async def test_a_stream_that_never_pauses_is_still_written_within_a_fraction_of_a_second(
    store: Store,
) -> None:
    """Events that keep coming, one every 10 ms (never `FLUSH_INTERVAL_S` apart), are written
    once the oldest has waited `LONGEST_WAIT_S`, not when the stream stops: a process killed
    mid-stream loses a fraction of a second of it."""
    run = FakeRun("stream", EventBus())
    recorder = store.record(run)
    events = list(run_events("stream", turns=1, calls_per_turn=100, finish=False))[:-1]
    other = sqlite3.connect(database_path())
    started = time.monotonic()
    seen_after: float | None = None
    try:
        for event in events[:150]:  # 1.5 s of events, 10 ms apart
            run.bus.publish(event)
            await asyncio.sleep(0.01)
            if seen_after is None and other.execute(
                "SELECT count(*) FROM events WHERE session_id = 'stream'"
            ).fetchone()[0]:
                seen_after = time.monotonic() - started
        assert seen_after is not None, "nothing written while the stream went on"
        assert seen_after < 1.0
    finally:
        other.close()
        recorder.close()


def test_a_run_that_never_finished_is_interrupted_with_what_it_wrote(store: Store) -> None:
    run = FakeRun("cut", EventBus())
    recorder = store.record(run)
    for event in run_events("cut", turns=2, calls_per_turn=2, finish=False):
        run.bus.publish(event)
    recorder.close()
    shown = store.session("cut")
    assert shown["session"]["status"] == "interrupted"
    assert shown["calls"][0]["status"] == "interrupted"
    assert len(shown["calls"]) == 5
    assert shown["session"]["input_tokens"] == 2 * 100 + 4 * 20


def _start(store: Store, run_id: str, documents: list[ContextDocument] | None = None) -> Recorder:
    """Record a run that has published only its first event, flushed."""
    run = FakeRun(run_id, EventBus())
    recorder = store.record(run, documents=documents or [])
    run.bus.publish(next(run_events(run_id)))
    recorder.flush()
    return recorder


def test_a_session_left_running_by_a_dead_process_is_interrupted_on_open(store: Store) -> None:
    _start(store, "orphan")
    live = Store(database_path())
    assert live.session("orphan")["session"]["status"] == "running"
    live.close()
    # A pid that cannot be running: past the kernel's pid limit.
    store.db.execute(
        "UPDATE sessions SET writer_pid = ? WHERE id = 'orphan'", [2**22 + os.getpid()]
    )
    reopened = Store(database_path())
    assert reopened.session("orphan")["session"]["status"] == "interrupted"
    reopened.close()


def test_an_empty_document_is_kept(store: Store) -> None:
    _start(store, "bare", [ContextDocument(name="a", text="")]).close()
    assert store.document_texts("bare") == [("a", "")]


def test_a_session_being_recorded_cannot_be_deleted(store: Store) -> None:
    recorder = _start(store, "busy")
    with pytest.raises(SessionBusy, match="still running"):
        store.delete("busy")
    recorder.close()
    assert store.delete("busy") == "busy"


def test_a_run_that_never_started_leaves_nothing(store: Store) -> None:
    recorder = store.record(FakeRun("stillborn", EventBus()), documents=[DOCUMENT])
    recorder.close()
    assert store.list_sessions() == []
    assert store.db.execute("SELECT count(*) FROM texts").fetchone()[0] == 0


def test_an_id_cannot_be_recorded_twice(store: Store, record_run: Callable[..., str]) -> None:
    record_run("twice")
    with pytest.raises(StoreError, match="already exists"):
        store.record(FakeRun("twice", EventBus()))
