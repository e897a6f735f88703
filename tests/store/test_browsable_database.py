"""A database an analyst can browse (migration m006): foreign keys, ISO-time views, indexes,
and the Datasette metadata that names every table, view and column.

Two databases: the real sessions of `real_sessions` (the engine over the scripted server), and
an old one made by m001..m005 only, holding those same rows plus orphans, then migrated.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from datasette.app import Datasette
from sqlite_utils import Database

from rlm_desktop.batch.records import BatchRecords
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.events import TurnStarted
from rlm_desktop.evaluation.records import EvaluationRecords
from rlm_desktop.store import Store
from rlm_desktop.store.detail import load_detail
from rlm_desktop.store.migrations import MIGRATIONS
from tests.store.real_sessions import real_sessions
from tests.store.searchable import WORDS, searchable_run
from tests.store.synthetic import FakeRun, run_events

__all__ = ["real_sessions"]

Sessions = tuple[Store, dict[str, str]]
DOCS = Path(__file__).resolve().parents[2] / "docs"
METADATA = DOCS / "datasette-metadata.yml"
M006 = "m006_foreign_keys_iso_times_and_indexes"
Key = tuple[tuple[str, ...], str, tuple[str, ...], str]
SESSION: Key = (("session_id",), "sessions", ("id",), "CASCADE")
CALL: Key = (("session_id", "call_id"), "calls", ("session_id", "id"), "CASCADE")
FOREIGN_KEYS: dict[str, set[Key]] = {
    "documents": {SESSION, (("sha256",), "texts", ("sha256",), "NO ACTION")},
    "calls": {
        SESSION,
        (("session_id", "parent_id"), "calls", ("session_id", "id"), "CASCADE"),
        (("prompt_sha256",), "texts", ("sha256",), "NO ACTION"),
    },
    "llm_requests": {SESSION, CALL},
    "turns": {SESSION, CALL},
    "cells": {
        SESSION,
        (("session_id", "call_id", "turn"), "turns", ("session_id", "call_id", "idx"), "CASCADE"),
    },
    "compactions": {SESSION, CALL},
    "events": {SESSION},
}
"""What the issue asks for: each table's references to the rows it belongs to."""
OWNED = ("events", "cells", "turns", "llm_requests", "calls", "documents", "compactions")
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def foreign_keys(conn: sqlite3.Connection, table: str) -> set[tuple[Any, ...]]:
    """`PRAGMA foreign_key_list` as (columns, table, other columns, on delete) per key."""
    keys: dict[int, list[tuple[Any, ...]]] = {}
    for row in conn.execute(f"PRAGMA foreign_key_list({table})"):
        keys.setdefault(row[0], []).append(row)
    return {
        (
            tuple(part[3] for part in parts),
            parts[0][2],
            tuple(part[4] for part in parts),
            parts[0][6],
        )
        for parts in keys.values()
    }


def schema(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """Every table and view a browser shows, with its columns (full-text indexes left out: they
    are the FTS5 tables Datasette hides itself)."""
    names = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
            " AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        if not re.search(r"_fts(_data|_idx|_docsize|_config)?$", name)
    ]
    return {name: [row[1] for row in conn.execute(f"PRAGMA table_info({name})")] for name in names}


def rows_of(conn: sqlite3.Connection, table: str, columns: list[str]) -> set[tuple[Any, ...]]:
    """Every row of `table` as (rowid, *columns)."""
    return set(conn.execute(f"SELECT rowid, {', '.join(columns)} FROM {table}").fetchall())


# -- the real sessions -------------------------------------------------------------------------


def test_each_table_references_the_rows_it_belongs_to(real_sessions: Sessions) -> None:
    store, ids = real_sessions
    conn = store.db.conn
    assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
    for table, expected in FOREIGN_KEYS.items():
        assert foreign_keys(conn, table) == expected, table
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    for session_id in ids.values():  # each shape left rows that the keys were checked on
        assert conn.execute(
            "SELECT count(*) FROM events WHERE session_id = ?", [session_id]
        ).fetchone()[0]
    children = "SELECT count(*) FROM calls WHERE session_id = ? AND parent_id IS NOT NULL"
    assert conn.execute(children, [ids["depth2"]]).fetchone()[0] == 2
    assert conn.execute("SELECT count(*) FROM cells").fetchone()[0] > 0


def test_the_views_give_every_time_as_utc_iso_8601(real_sessions: Sessions) -> None:
    store, _ = real_sessions
    conn = store.db.conn
    checked = 0
    for view, columns in schema(conn).items():
        if not view.endswith("_view"):
            continue
        table = view.removesuffix("_view")
        isos = [column for column in columns if column.endswith("_iso")]
        assert columns == [*schema(conn)[table], *isos], view
        for row in conn.execute(f"SELECT {', '.join(isos)}, * FROM {view}"):
            named = dict(zip([*isos, *columns], row, strict=True))
            for iso in isos:
                epoch = named[iso.removesuffix("_iso")]
                if epoch is None:
                    assert named[iso] is None
                    continue
                assert ISO.fullmatch(named[iso]), named[iso]
                parsed = datetime.fromisoformat(named[iso].replace("Z", "+00:00"))
                assert abs(parsed.timestamp() - epoch) < 0.0006  # the nearest millisecond
                checked += 1
    assert checked > 100


def test_a_known_time_reads_as_its_utc_string(tmp_path: Path) -> None:
    store = Store(tmp_path / "sessions.db")
    at = datetime(2026, 11, 30, 19, 7, 16, 250000, tzinfo=UTC)
    with store.transaction() as conn:
        conn.execute("INSERT INTO sessions (id, started_at) VALUES ('s', ?)", [at.timestamp()])
    iso = store.db.execute("SELECT started_at_iso FROM sessions_view").fetchone()[0]
    store.close()
    assert iso == at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _inlined(table_json: dict[str, Any]) -> str:
    """The SQL a Datasette table page ran, its parameters written in."""
    params = table_json["query"]["params"]
    return re.sub(r":(\w+)", lambda m: repr(params[m.group(1)]), table_json["query"]["sql"])


def _plan(conn: sqlite3.Connection, sql: str) -> str:
    return " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))


def test_the_apps_request_queries_read_in_index_order(real_sessions: Sessions) -> None:
    """The statements the app really runs to read a session's requests (traced), planned."""
    store, ids = real_sessions
    conn = store.db.conn
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        load_detail(store, ids["fanout"])
        store.call(ids["fanout"], "c1")
    finally:
        conn.set_trace_callback(None)
    checks = [sql for sql in statements if sql.startswith("SELECT CASE WHEN")]
    reads = [sql for sql in statements if "FROM llm_requests" in sql and sql not in checks]
    assert len(reads) == 2
    for check in checks:  # a session's record checked once (store/integrity.py), by its index
        if "FROM texts" not in check and "FROM sessions" not in check:
            assert "SEARCH" in _plan(conn, check), check
    plans = [_plan(conn, sql) for sql in reads]
    assert "idx_llm_requests_session_id_sent_at_responded_at" in plans[0]
    assert "idx_llm_requests_session_id_call_id_sent_at" in plans[1]
    for plan in plans:
        assert "TEMP B-TREE" not in plan, plan


async def test_datasette_filters_on_the_new_indexes(real_sessions: Sessions) -> None:
    """The statements Datasette runs when an analyst filters calls and events, planned."""
    store, _ = real_sessions
    datasette = _datasette(store.path)
    for path, index in (
        ("calls.json?status=ok", "idx_calls_status"),
        ("calls.json?model=openai/test-model", "idx_calls_model"),
        ("events.json?type=CellExecuted", "idx_events_type"),
    ):
        response = await datasette.client.get(f"/sessions/{path}")
        assert response.status_code == 200, path
        assert f"USING INDEX {index}" in _plan(store.db.conn, _inlined(response.json())), path
        assert response.json()["filtered_table_rows_count"] > 0, path


# -- the Datasette metadata --------------------------------------------------------------------


def _metadata() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(METADATA.read_text(encoding="utf-8"))
    return loaded


def _datasette(path: Path) -> Datasette:
    return Datasette(files=[str(path)], metadata=_metadata())


def test_the_metadata_describes_exactly_the_real_schema(real_sessions: Sessions) -> None:
    store, _ = real_sessions
    EvaluationRecords(store)  # the evaluation and batch tables live in the same file
    BatchRecords(store)
    actual = schema(store.db.conn)
    described = _metadata()["databases"]["sessions"]["tables"]
    assert sorted(described) == sorted(actual)
    for table, columns in actual.items():
        meta = described[table]
        assert meta["description"], table
        assert sorted(meta["columns"]) == sorted(columns), table
        assert all(text for text in meta["columns"].values()), table
        named = [
            *meta.get("facets", []),
            *meta.get("units", {}),
            *[meta[key] for key in ("sort", "sort_desc", "label_column") if key in meta],
        ]
        assert set(named) <= set(columns), table


def test_the_schema_page_names_every_table_key_and_view(real_sessions: Sessions) -> None:
    store, _ = real_sessions
    page = (DOCS / "schema.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## `?(\w+)`?\n(.*?)(?=^## |\Z)", page, re.M | re.S))
    conn = store.db.conn
    for table, keys in FOREIGN_KEYS.items():
        for columns, other, other_columns, _ in foreign_keys(conn, table):
            left = ", ".join(columns) if len(columns) > 1 else columns[0]
            right = ", ".join(other_columns) if len(other_columns) > 1 else other_columns[0]
            shown = f"({left})" if len(columns) > 1 else left
            target = f"{other}({right})"
            assert f"`{shown}` → `{target}`" in sections[table], (table, shown, target)
        assert len(keys) == len(foreign_keys(conn, table))
    for view in (name for name in schema(conn) if name.endswith("_view")):
        assert f"`{view}`" in sections[view.removesuffix("_view")], view
    for table in ("sessions", "texts"):
        assert table in sections


async def test_datasette_serves_every_table_with_its_links(real_sessions: Sessions) -> None:
    store, ids = real_sessions
    datasette = _datasette(store.path)
    conn = store.db.conn
    for table in schema(conn):
        response = await datasette.client.get(f"/sessions/{table}.json?_shape=objects")
        assert response.status_code == 200, table
        count = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        assert response.json()["filtered_table_rows_count"] == count, table
    response = await datasette.client.get(
        f"/sessions/calls.json?_shape=objects&_labels=on&session_id={ids['depth2']}"
    )
    query = conn.execute("SELECT query FROM sessions WHERE id = ?", [ids["depth2"]]).fetchone()[0]
    assert response.json()["rows"][0]["session_id"] == {"value": ids["depth2"], "label": query}
    documents = await datasette.client.get("/sessions/documents.json?_labels=on&_shape=objects")
    assert {"column": "sha256", "other_table": "texts", "other_column": "sha256"} in [
        link for link, _ in documents.json()["expandable_columns"]
    ]
    page = await datasette.client.get(f"/sessions/events?session_id={ids['fanout']}")
    assert f'href="/sessions/sessions/{ids["fanout"]}"' in page.text
    table_page = await datasette.client.get("/sessions/calls")
    assert "The call tree: one row per RLM call" in table_page.text


# -- an old database, migrated -----------------------------------------------------------------


def _copy_rows(old: Database, source: Path) -> None:
    """Every row of the real sessions, in the columns the old schema has, with its rowid."""
    old.execute("ATTACH DATABASE ? AS source", [str(source)])
    for table in (*OWNED, "sessions", "texts"):
        columns = ", ".join(old.table(table).columns_dict)
        old.execute(
            f"INSERT INTO main.{table} (rowid, {columns})"
            f" SELECT rowid, {columns} FROM source.{table}"
        )
    old.conn.commit()
    old.execute("DETACH DATABASE source")


ORPHANS: dict[str, dict[str, Any]] = {
    "events": {"session_id": "lost", "seq": 0, "ts": 1.0, "type": "RunStarted", "data": "{}"},
    "llm_requests": {"session_id": "lost", "id": "r1", "call_id": "c7"},
    "documents": {"session_id": "lost", "position": 0, "name": "gone.txt", "sha256": "f00d"},
}


@pytest.fixture
def migrated(real_sessions: Sessions, tmp_path: Path) -> Iterator[tuple[Store, dict[str, Any]]]:
    """(the migrated store, {"before": rows per table, "triggers": ..., "ids": ...})."""
    source, ids = real_sessions
    path = tmp_path / "sessions.db"
    old = Database(sqlite3.connect(str(path)))
    MIGRATIONS.apply(old, stop_before=M006)
    _copy_rows(old, source.path)
    for table, row in ORPHANS.items():
        old[table].insert(row)  # type: ignore[union-attr]
    root = ids["depth2"]
    old["calls"].insert({"session_id": root, "id": "c99", "parent_id": "c98", "kind": "llm"})  # type: ignore[union-attr]
    old["cells"].insert({"session_id": root, "call_id": "c99", "turn": 4, "idx": 0, "code": "x"})  # type: ignore[union-attr]
    old.conn.commit()
    before = {t: (cols, rows_of(old.conn, t, cols)) for t, cols in schema(old.conn).items()}
    triggers = old.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    old.close()
    store = Store(path)
    yield store, {"before": before, "triggers": set(triggers), "ids": ids}
    store.close()


def test_an_old_database_migrates_keeping_every_row(
    migrated: tuple[Store, dict[str, Any]],
) -> None:
    store, old = migrated
    conn = store.db.conn
    root = old["ids"]["depth2"]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    for table, expected in FOREIGN_KEYS.items():
        assert foreign_keys(conn, table) == expected, table
    stand_ins: dict[str, tuple[str, set[tuple[Any, ...]]]] = {
        "sessions": ("id", {("lost",)}),
        "calls": ("session_id, id", {("lost", "c7"), (root, "c98")}),
        "turns": ("session_id, call_id, idx", {(root, "c99", 4)}),
        "texts": ("sha256", {("f00d",)}),
    }
    for table, (columns, rows) in old["before"].items():
        after = rows_of(conn, table, columns)
        assert rows <= after, table  # every row, under its old rowid
        if table in stand_ins:
            key, made_rows = stand_ins[table]
            made = {
                conn.execute(f"SELECT {key} FROM {table} WHERE rowid = ?", [row[0]]).fetchone()
                for row in after - rows
            }
            assert made == made_rows, table
        elif table in OWNED:
            assert after == rows, table
    lost = conn.execute("SELECT status, error FROM sessions WHERE id = 'lost'").fetchone()
    assert lost[0] == "interrupted"
    assert "m006" in lost[1]
    triggers = set(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
    assert {name for name, _ in triggers} == {name for name, _ in old["triggers"]}
    rebuilt = {"turns_ai", "turns_au", "turns_ad"}  # by m008, over one more column
    assert {t for t in triggers if t[0] not in rebuilt} == {
        t for t in old["triggers"] if t[0] not in rebuilt
    }


def test_search_finds_old_text_and_text_written_after_the_migration(
    migrated: tuple[Store, dict[str, Any]],
) -> None:
    store, old = migrated
    found = {(hit["session_id"], hit["field"]) for hit in store.search("fanned")}
    assert (old["ids"]["fanout"], "stdout") in found
    assert {hit["session_id"] for hit in store.search("grandchild")} >= {old["ids"]["depth2"]}
    run = FakeRun("after-m006", EventBus())
    recorder = store.record(run)
    for event in searchable_run("after-m006"):
        run.bus.publish(event)
    recorder.close()
    assert recorder.warnings == []
    for word, (field, place) in WORDS.items():
        hits = [hit for hit in store.search(word) if hit["field"] == field]
        assert [(hit["session_id"], hit["place"]) for hit in hits] == [("after-m006", place)], word


def test_deleting_a_session_removes_everything_it_owns(
    migrated: tuple[Store, dict[str, Any]],
) -> None:
    store, old = migrated
    conn = store.db.conn
    fanout, depth2 = old["ids"]["fanout"], old["ids"]["depth2"]
    store.delete(fanout)
    store.delete("lost")
    with store.transaction() as held:  # the keys alone: the session row, and nothing else
        held.execute("DELETE FROM sessions WHERE id = ?", [depth2])
    for session_id in (fanout, "lost", depth2):
        for table in OWNED:
            left = conn.execute(f"SELECT count(*) FROM {table} WHERE session_id = ?", [session_id])
            assert left.fetchone()[0] == 0, (session_id, table)
    assert conn.execute("SELECT count(*) FROM texts WHERE sha256 = 'f00d'").fetchone()[0] == 0
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert store.search("fanned") == []
    assert len(store.list_sessions()) == len(old["ids"]) - 2


def test_an_event_whose_call_was_never_started_is_left_out_alone(store: Store) -> None:
    """The keys refuse a row without its parent: that one event is left out (and said so), the
    rest of the run is written."""
    events = list(run_events("stray"))
    events.insert(5, TurnStarted(run_id="stray", call_id="never-started", index=0))
    run = FakeRun("stray", EventBus())
    recorder = store.record(run)
    for event in events:
        run.bus.publish(event)
    recorder.close()
    assert len(recorder.warnings) == 1
    assert "1 events could not be stored" in recorder.warnings[0]
    assert "TurnStarted" in recorder.warnings[0]
    logged = store.db.execute("SELECT count(*) FROM events WHERE session_id = 'stray'")
    assert logged.fetchone()[0] == len(events) - 1
    assert store.session("stray")["session"]["status"] == "completed"
