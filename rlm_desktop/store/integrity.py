"""A saved session's record checked against the shape of the app's own tables before it is read.

A sessions.db can be someone else's (shared for review, or made by hand), and SQLite keeps any
value in any column: text where a count belongs, a blob where text does, a settings column that
is not JSON. Read as they are, such values had stopped `sessions list`, `show`, every export and
the health check with a traceback. So a session is checked once, when it is first resolved, and
one that does not hold to `COLUMNS` is refused in one line naming the table and the column.

`COLUMNS` is the schema the migrations make (a test keeps it equal to a fresh database's): each
column's kind, `T` text, `I` a whole number and `R` any number (both taken as numbers: SQLite keeps
a whole number past 2**63 as a real), `J` JSON text; NULL is always allowed.
"""

from __future__ import annotations

import sqlite3
from functools import cache

COLUMNS = {
    "sessions": (
        "id:T query:T mode:T chosen_mode:T mode_reason:T model:T sub_model:T profile:T "
        "settings:J budget:J status:T answer:T error:T cost_usd:R tokens:I input_tokens:I "
        "output_tokens:I turns:I sub_calls:I max_depth_reached:I unpriced:I started_at:R "
        "ended_at:R wall_s:R writer_pid:I writer_started:R writer_host:T sandbox:T "
        "conversation_id:T follows:T ran_on:J stored_chars:I cut_chars:I origin_name:T "
        "origin_format:T imported_at:R origin_sha256:T origin_left_out:T"
    ),
    "documents": (
        "id:I session_id:T position:I name:T path:T size:I sha256:T chars:I tokens:I type:T "
        "sections:J attached_to:T"
    ),
    "calls": (
        "session_id:T id:T parent_id:T seq:I kind:T depth:I model:T prompt:T response:T answer:T "
        "answer_source:T status:T error:T input_tokens:I output_tokens:I cost_usd:R wall_s:R "
        "started_at:R ended_at:R parent_turn:I parent_cell:I worker_restarts:I system_sha256:T "
        "opening:J answer_sources:J prompt_sha256:T prompt_document:I prompt_start:I "
        "prompt_end:I prompt_chars:I prompt_note:T"
    ),
    "llm_requests": (
        "session_id:T id:T call_id:T turn:I model:T messages:I reserved_tokens:I content:T "
        "input_tokens:I output_tokens:I cost_usd:R latency_s:R finish_reason:T truncated:I "
        "attempts:I error:T sent_at:R responded_at:R reserved_output_tokens:I "
        "reserved_cost_usd:R"
    ),
    "turns": (
        "session_id:T call_id:T idx:I reply:T code_blocks:I observation:T started_at:R ended_at:R "
        "duration_s:R unfinished_reply:T"
    ),
    "cells": (
        "session_id:T call_id:T turn:I idx:I code:T stdout:T stderr:T error:T duration_s:R "
        "timed_out:I variables_lost:I ended_at:R variables:J"
    ),
    "compactions": (
        "id:I session_id:T call_id:T turn:I tokens_before:I tokens_after:I summary:T ts:R"
    ),
    "events": "id:I session_id:T seq:I ts:R type:T data:J",
    "texts": "sha256:T text:T chars:I",
}
_TYPES = {"T": "'text'", "J": "'text'", "I": "'integer', 'real'", "R": "'integer', 'real'"}
"""What SQLite may hold for each kind: a whole number past 2**63 is kept as a real."""
_ROWS_OF_SESSION = {
    "sessions": "id = :id",
    "texts": (
        "sha256 IN (SELECT sha256 FROM documents WHERE session_id = :id"
        " UNION SELECT system_sha256 FROM calls WHERE session_id = :id"
        " UNION SELECT prompt_sha256 FROM calls WHERE session_id = :id)"
    ),
}
_KINDS = {"T": "text", "J": "JSON text", "I": "a number", "R": "a number"}


@cache
def columns(table: str) -> dict[str, str]:
    """The columns of `table` in `COLUMNS`, each with its kind letter."""
    return dict(entry.split(":") for entry in COLUMNS[table].split())


def _wrong(column: str, kind: str) -> str:
    """True for a value of `column` that is not NULL and not of `kind` (SQLite's json_valid of
    NULL is 0 in some versions, NULL in others: NULL is ruled out first)."""
    held = f"typeof({column}) NOT IN ({_TYPES[kind]})"
    if kind == "J":
        held = f"({held} OR NOT json_valid({column}))"
    return f"({column} IS NOT NULL AND {held})"


@cache
def _checks() -> list[tuple[str, str]]:
    """Per table, one statement naming the first column of a row of the session that holds a
    value of the wrong kind (no row: none does)."""
    checks = []
    for table in COLUMNS:
        wrong = {name: _wrong(name, kind) for name, kind in columns(table).items()}
        named = " ".join(f"WHEN {test} THEN '{name}'" for name, test in wrong.items())
        rows = _ROWS_OF_SESSION.get(table, "session_id = :id")
        checks.append(
            (
                table,
                f"SELECT CASE {named} END FROM {table} WHERE {rows}"
                f" AND ({' OR '.join(wrong.values())}) LIMIT 1",
            )
        )
    return checks


def damage(conn: sqlite3.Connection, session_id: str) -> str | None:
    """Why the session's record does not hold to the app's tables (one line), or None.

    Raises `sqlite3.Error` where the tables themselves are not the app's (a column missing)."""
    for table, check in _checks():
        found = conn.execute(check, {"id": session_id}).fetchone()
        if found is not None:
            kind = columns(table)[found[0]]
            return f"its {table}.{found[0]} holds a value that is not {_KINDS[kind]}"
    return None
