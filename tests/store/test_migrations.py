"""The schema: migrations from an empty database, the columns they make, WAL, idempotence."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sqlite_utils import Database

from rlm_desktop.engine.events import CallStarted
from rlm_desktop.paths import database_path
from rlm_desktop.redact import Redactor
from rlm_desktop.store import Store
from rlm_desktop.store.detail import load_detail
from rlm_desktop.store.liveness import current_writer
from rlm_desktop.store.migrations import MIGRATIONS
from rlm_desktop.store.writer import SessionWriter, prepare_opening
from tests.store.searchable import WORDS, searchable_run

EXPECTED_COLUMNS = {
    "sessions": {
        "id": str,
        "query": str,
        "mode": str,
        "chosen_mode": str,
        "mode_reason": str,
        "model": str,
        "sub_model": str,
        "profile": str,
        "settings": str,
        "budget": str,
        "status": str,
        "answer": str,
        "error": str,
        "cost_usd": float,
        "tokens": int,
        "input_tokens": int,
        "output_tokens": int,
        "turns": int,
        "sub_calls": int,
        "max_depth_reached": int,
        "unpriced": int,
        "started_at": float,
        "ended_at": float,
        "wall_s": float,
        "writer_pid": int,
        "writer_started": float,
        "writer_host": str,
        "sandbox": str,
        "ran_on": str,
        "conversation_id": str,
        "follows": str,
        "stored_chars": int,
        "cut_chars": int,
        "origin_name": str,
        "origin_format": str,
        "imported_at": float,
        "origin_sha256": str,
        "origin_left_out": str,
    },
    "texts": {"sha256": str, "text": str, "chars": int},
    "known_files": {"path": str, "size": int, "mtime_ns": int, "chars": int, "sha256": str},
    "documents": {
        "id": int,
        "session_id": str,
        "position": int,
        "name": str,
        "path": str,
        "size": int,
        "sha256": str,
        "chars": int,
        "tokens": int,
        "type": str,
        "sections": str,
        "attached_to": str,
    },
    "calls": {
        "session_id": str,
        "id": str,
        "parent_id": str,
        "seq": int,
        "kind": str,
        "depth": int,
        "model": str,
        "prompt": str,
        "response": str,
        "answer": str,
        "answer_source": str,
        "status": str,
        "error": str,
        "input_tokens": int,
        "output_tokens": int,
        "cost_usd": float,
        "wall_s": float,
        "started_at": float,
        "ended_at": float,
        "parent_turn": int,
        "parent_cell": int,
        "worker_restarts": int,
        "system_sha256": str,
        "opening": str,
        "answer_sources": str,
        "prompt_sha256": str,
        "prompt_document": int,
        "prompt_start": int,
        "prompt_end": int,
        "prompt_chars": int,
        "prompt_note": str,
    },
    "llm_requests": {
        "session_id": str,
        "id": str,
        "call_id": str,
        "turn": int,
        "model": str,
        "messages": int,
        "reserved_tokens": int,
        "content": str,
        "input_tokens": int,
        "output_tokens": int,
        "cost_usd": float,
        "latency_s": float,
        "finish_reason": str,
        "truncated": int,
        "attempts": int,
        "error": str,
        "sent_at": float,
        "responded_at": float,
        "reserved_output_tokens": int,
        "reserved_cost_usd": float,
    },
    "turns": {
        "session_id": str,
        "call_id": str,
        "idx": int,
        "reply": str,
        "code_blocks": int,
        "observation": str,
        "started_at": float,
        "ended_at": float,
        "duration_s": float,
        "unfinished_reply": str,
    },
    "cells": {
        "session_id": str,
        "call_id": str,
        "turn": int,
        "idx": int,
        "code": str,
        "stdout": str,
        "stderr": str,
        "error": str,
        "duration_s": float,
        "timed_out": int,
        "variables_lost": int,
        "ended_at": float,
        "variables": str,
    },
    "events": {"id": int, "session_id": str, "seq": int, "ts": float, "type": str, "data": str},
    "compactions": {
        "id": int,
        "session_id": str,
        "call_id": str,
        "turn": int,
        "tokens_before": int,
        "tokens_after": int,
        "summary": str,
        "ts": float,
    },
}


def test_a_fresh_database_gets_every_table_with_its_columns(store: Store) -> None:
    assert store.path == database_path()
    for table, columns in EXPECTED_COLUMNS.items():
        assert store.db[table].columns_dict == columns, table  # type: ignore[union-attr]
    assert [m.name for m in MIGRATIONS.applied(store.db)] == [
        "m001_initial",
        "m002_calls_wall_s",
        "m003_search_everything_a_run_holds",
        "m004_sessions_sandbox",
        "m005_conversations_and_compactions",
        "m006_foreign_keys_iso_times_and_indexes",
        "m007_opening_messages_and_cell_variables",
        "m008_unfinished_turns_searchable",
        "m009_requests_charged_their_hold",
        "m010_documents_type_and_sections",
        "m011_answer_sources",
        "m012_sessions_ran_on",
        "m013_prompts_stored_once",
        "m014_sessions_origin",
        "m015_known_files",
    ]
    assert store.db.journal_mode == "wal"


def test_the_tree_and_search_have_their_indexes(store: Store) -> None:
    index_columns = {tuple(index.columns) for index in store.db["calls"].indexes}  # type: ignore[union-attr]
    assert ("session_id", "parent_id") in index_columns
    for table in ("sessions", "calls", "turns", "cells"):
        assert store.db[table].detect_fts() == f"{table}_fts"  # type: ignore[union-attr]
    assert {"calls_fts_pending", "turns_fts_pending", "cells_fts_pending"} <= set(
        store.db.table_names()
    )


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "again.db"
    Store(path).close()
    reopened = Store(path)
    applied = reopened.db.execute("SELECT count(*) FROM _sqlite_migrations").fetchone()[0]
    assert applied == len(MIGRATIONS.applied(reopened.db)) == 15
    assert MIGRATIONS.pending(reopened.db) == []
    reopened.close()


def test_a_database_from_the_first_release_keeps_its_calls(tmp_path: Path) -> None:
    """m002 renames `calls.latency_s` (it always held wall time) without losing a value."""
    path = tmp_path / "old.db"
    old = Database(sqlite3.connect(str(path)))
    MIGRATIONS.apply(old, stop_before="m002_calls_wall_s")
    old["calls"].insert({"session_id": "s1", "id": "c1", "latency_s": 2.5})  # type: ignore[union-attr]
    old.conn.commit()
    old.close()
    store = Store(path)
    assert store.db.execute("SELECT id, wall_s FROM calls").fetchall() == [("c1", 2.5)]
    store.close()


def test_a_failing_migration_leaves_no_trace(tmp_path: Path) -> None:
    """Each migration is atomic: one that raises half-way is rolled back and stays pending."""
    from sqlite_utils.migrations import Migrations

    broken = Migrations("broken")

    @broken()
    def m001_half(db: Database) -> None:
        db.table("half").create({"id": int}, pk="id")
        raise RuntimeError("stop")

    db = Database(sqlite3.connect(str(tmp_path / "broken.db")))
    with pytest.raises(RuntimeError, match="stop"):
        broken.apply(db)
    assert "half" not in db.table_names()
    assert [m.name for m in broken.pending(db)] == ["m001_half"]
    db.close()


def test_a_database_from_before_m003_finds_text_in_its_saved_sessions_output(
    tmp_path: Path,
) -> None:
    """m003 indexes what older sessions already hold: their output, prompts, errors, replies."""
    path = tmp_path / "m002.db"
    old = Database(sqlite3.connect(str(path)))
    MIGRATIONS.apply(old, stop_before="m003_search_everything_a_run_holds")
    # Today's writer writes columns an m002 database has not (a request's hold, m009; where a
    # prompt is kept, m013): it records the run in a database of today, whose rows are copied
    # into the m002 one as far as its columns go, as that release wrote them.
    today = Database(sqlite3.connect(str(tmp_path / "today.db")))
    MIGRATIONS.apply(today)
    writer = SessionWriter(today.conn, "old-run", Redactor.for_run(None))
    with today.conn:
        writer.open(prepare_opening("old-run", [], Redactor.for_run(None), current_writer()))
        writer.write(list(searchable_run("old-run")))
    today.close()
    old.execute("ATTACH DATABASE ? AS today", [str(tmp_path / "today.db")])
    with old.conn:
        for table in ("sessions", "calls", "llm_requests", "turns", "cells", "events"):
            columns = ", ".join(old[table].columns_dict)  # type: ignore[union-attr]
            old.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM today.{table}")
    old.execute("DETACH DATABASE today")
    before = "SELECT count(*) FROM cells_fts WHERE cells_fts MATCH 'platypus'"
    assert old.execute(before).fetchone()[0] == 0  # m001 indexed a cell's code only
    old.close()

    store = Store(path)
    for word, (field, place) in WORDS.items():
        hits = [hit for hit in store.search(word) if hit["field"] == field]
        assert [(hit["session_id"], hit["place"]) for hit in hits] == [("old-run", place)], word
    assert store.session("old-run")["turns"][0]["stdout"] == "tank B: platypus\n"
    store.close()


def test_a_database_from_before_m008_finds_the_turn_a_killed_run_was_in(tmp_path: Path) -> None:
    """m008 gives the turns of calls that already ended unfinished the reply they had."""
    path = tmp_path / "m007.db"
    old = Database(sqlite3.connect(str(path)))
    MIGRATIONS.apply(old, stop_before="m008_unfinished_turns_searchable")
    with old.conn:
        old.execute("INSERT INTO sessions (id, query, status) VALUES ('s1', 'q', 'interrupted')")
        old.execute(
            "INSERT INTO calls (session_id, id, seq, kind, status) VALUES"
            " ('s1', 'c0', 0, 'rlm', 'interrupted'), ('s1', 'c1', 1, 'rlm', 'running')"
        )
        old.execute(
            "INSERT INTO turns (session_id, call_id, idx, reply) VALUES ('s1', 'c0', 0, 'Seen.'),"
            " ('s1', 'c0', 1, NULL), ('s1', 'c1', 0, NULL)"
        )
        old.execute(
            "INSERT INTO llm_requests (session_id, id, call_id, turn, content, sent_at) VALUES"
            " ('s1', 'r0', 'c0', 0, 'Seen.', 1), ('s1', 'r1', 'c0', 1, 'Then: pangolin', 2),"
            " ('s1', 'r2', 'c1', 0, 'still running: pangolin', 3)"
        )
    old.close()

    store = Store(path)
    assert [hit["place"] for hit in store.search("pangolin")] == [
        "reply (turn not finished) · root call · turn 2"
    ]
    store.close()


def test_a_database_from_before_m013_keeps_each_long_prompt_once(tmp_path: Path) -> None:
    """m013 takes the prompts out of the event log (their calls' rows hold them) and keeps each
    long one once: a slice of the session's document as its span, a repeat as one text."""
    document = "".join(f"line {n:06d} of the ledger\n" for n in range(4_000))
    slice_ = document[1_000:41_000]
    repeated = "".join(f"word{n} " for n in range(5_000))
    prompts = {"c0": "How many lines?", "c1": slice_, "c2": repeated, "c3": repeated}
    path = tmp_path / "m012.db"
    old = Database(sqlite3.connect(str(path)))
    MIGRATIONS.apply(old, stop_before="m013_prompts_stored_once")
    with old.conn:
        old.execute("INSERT INTO sessions (id, query, status) VALUES ('s1', 'q', 'completed')")
        old.execute("INSERT INTO texts (sha256, text, chars) VALUES ('d0', ?, ?)", [document, 1])
        old.execute(
            "INSERT INTO documents (session_id, position, name, sha256) VALUES"
            " ('s1', 0, 'ledger.txt', 'd0')"
        )
        for seq, (call_id, prompt) in enumerate(prompts.items()):
            parent = None if call_id == "c0" else "c0"
            old.execute(
                "INSERT INTO calls (session_id, id, parent_id, seq, kind, prompt, status)"
                " VALUES ('s1', ?, ?, ?, ?, ?, 'ok')",
                [call_id, parent, seq, "rlm" if parent is None else "llm", prompt],
            )
            fields = {"call_id": call_id, "parent_id": parent, "kind": "llm", "depth": 1,
                      "model": "m", "prompt": prompt}  # fmt: skip
            old.execute(
                "INSERT INTO events (session_id, seq, ts, type, data) VALUES"
                " ('s1', ?, ?, 'CallStarted', ?)",
                [seq, 1.0 + seq, json.dumps(fields)],
            )
    old.close()

    store = Store(path)
    logged = store.db.execute("SELECT sum(length(data)) FROM events").fetchone()[0]
    kept = store.db.execute("SELECT sum(length(prompt)) FROM calls").fetchone()[0]
    assert logged < 1_000  # the prompts are no longer held twice
    assert kept < 7_000
    rows = store.db.execute(
        "SELECT id, prompt_chars, prompt_document, prompt_start, prompt_end,"
        " prompt_sha256 IS NOT NULL FROM calls ORDER BY seq"
    ).fetchall()
    assert rows == [
        ("c0", len(prompts["c0"]), None, None, None, 0),
        ("c1", len(slice_), 0, 1_000, 41_000, 0),
        ("c2", len(repeated), None, None, None, 1),
        ("c3", len(repeated), None, None, None, 1),
    ]
    assert store.db.execute("SELECT count(*) FROM texts").fetchone()[0] == 2  # one for c2, c3
    replayed = {e.call_id: e.prompt for e in store.replay("s1") if isinstance(e, CallStarted)}
    assert replayed == prompts
    assert {c["id"]: c["prompt"] for c in load_detail(store, "s1").calls} == prompts
    store.close()
