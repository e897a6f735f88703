"""A shared sessions.db whose values are of the wrong kind (text where a count belongs, a settings
column that is not JSON): every command says so in one line, the listing and the history go on
around it, and the app never reads such a session further (issue #41)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlite_utils import Database

from rlm_desktop import paths
from rlm_desktop.store import Store
from rlm_desktop.store.history_queries import HistoryFilter, history_rows
from rlm_desktop.store.integrity import COLUMNS, columns
from rlm_desktop.store.migrations import MIGRATIONS
from tests.store.conftest import Cli

CRAFTED = "20261201-101010-abcdef"
SOUND = "20261201-101011-abcdef"
WRONG = [
    ("sessions", "cost_usd", "'free'"),
    ("sessions", "input_tokens", "'lots'"),
    ("sessions", "settings", "'{not json'"),
    ("calls", "depth", "'deep'"),
    ("calls", "prompt", "x'00ff'"),
    ("turns", "duration_s", "'slow'"),
    ("cells", "variables", "'[1,'"),
    ("events", "data", "'{'"),
    ("llm_requests", "input_tokens", "x'01'"),
    ("documents", "chars", "'many'"),
]


def _craft(table: str, column: str, value: str) -> None:
    key = "id" if table == "sessions" else "session_id"
    with sqlite3.connect(paths.database_path()) as db:
        db.execute(f"UPDATE {table} SET {column} = {value} WHERE {key} = ?", [CRAFTED])


@pytest.fixture
def crafted(store: Store, record_run: Callable[..., str]) -> None:
    record_run(SOUND, turns=1, calls_per_turn=1)
    record_run(CRAFTED, turns=2, calls_per_turn=2, child_every=2)
    store.close()


@pytest.mark.parametrize(("table", "column", "value"), WRONG)
def test_every_command_says_in_one_line_that_the_session_is_damaged(
    crafted: None, cli: Cli, tmp_path: Path, table: str, column: str, value: str
) -> None:
    _craft(table, column, value)
    for argv in (
        ("show", CRAFTED),
        ("show", CRAFTED, "--json"),
        ("export", CRAFTED, "--format", "md", "-o", str(tmp_path / "out.md")),
        ("export", CRAFTED, "--format", "otlp", "-o", str(tmp_path / "out.json")),
        ("health", CRAFTED),
    ):
        code, _out, err = cli(*argv)
        assert code == 2, (argv, err)
        assert err.count("\n") == 1, err
        assert f"session {CRAFTED} is damaged: its {table}.{column} holds" in err
    assert not list(tmp_path.glob("out.*"))
    code, out, err = cli("list")
    assert code == 0, err
    listed = {line.split()[0]: line.split()[3] for line in out.splitlines()[1:]}
    listed_columns = ("cost_usd", "input_tokens")  # the listing shows those, not the settings
    expected = "damaged" if table == "sessions" and column in listed_columns else "completed"
    assert listed == {CRAFTED: expected, SOUND: "completed"}
    code, out, _err = cli("show", SOUND, "--json")
    assert code == 0
    assert json.loads(out)["session"]["id"] == SOUND


def test_the_history_leaves_out_a_session_of_the_wrong_kinds(crafted: None) -> None:
    _craft("sessions", "cost_usd", "'free'")
    _craft("sessions", "settings", "'{not json'")
    store = Store(paths.database_path())
    try:
        with store.lock:
            found = history_rows(store.db.conn, HistoryFilter())
    finally:
        store.close()
    assert [row["id"] for row in found] == [SOUND]


def test_a_running_session_whose_writer_is_no_number_is_taken_as_interrupted(
    crafted: None,
) -> None:
    with sqlite3.connect(paths.database_path()) as db:
        db.execute(
            "UPDATE sessions SET status = 'running', writer_pid = 'me', writer_started = 'now',"
            " writer_host = NULL WHERE id = ?",
            [CRAFTED],
        )
    store = Store(paths.database_path())
    try:
        listed = {row["id"]: row["status"] for row in store.list_sessions()}
    finally:
        store.close()
    assert listed[CRAFTED] == "interrupted"


def test_the_checked_columns_are_those_a_fresh_database_has() -> None:
    fresh = Database(memory=True)
    MIGRATIONS.apply(fresh)
    kinds = {"TEXT": "TJ", "INTEGER": "I", "FLOAT": "R", "REAL": "R"}
    for table in COLUMNS:
        declared = {c.name: c.type for c in fresh[table].columns}
        checked = columns(table)
        assert set(checked) == set(declared), table
        for name, kind in checked.items():
            assert kind in kinds[declared[name]], (table, name)
