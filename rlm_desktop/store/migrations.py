"""The database schema as numbered migrations; each runs in one transaction.

Never edit a migration that has shipped: add `m002_...` instead. `MIGRATIONS.apply(db)` records
what it applied in sqlite-utils' `_sqlite_migrations` table.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.db import ForeignKey
from sqlite_utils.migrations import Migrations

MIGRATIONS = Migrations("rlm_desktop")


@MIGRATIONS()
def m001_initial(db: Database) -> None:
    """Sessions, their documents, the call tree, turns, cells, LLM requests and the event log."""
    db.table("sessions").create(
        {
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
        },
        pk="id",
        not_null=["status"],
        defaults={"query": "", "status": "running"},
    )
    db.table("sessions").create_index(["started_at"])

    db.table("texts").create({"sha256": str, "text": str, "chars": int}, pk="sha256")
    db.table("documents").create(
        {
            "id": int,
            "session_id": str,
            "position": int,
            "name": str,
            "path": str,
            "size": int,
            "sha256": str,
            "chars": int,
            "tokens": int,
        },
        pk="id",
    )
    db.table("documents").create_index(["session_id", "position"], unique=True)

    db.table("calls").create(
        {
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
            "latency_s": float,
            "started_at": float,
            "ended_at": float,
            "parent_turn": int,
            "parent_cell": int,
            "worker_restarts": int,
        },
        pk=("session_id", "id"),
    )
    db.table("calls").create_index(["session_id", "parent_id"])
    db.table("calls").create_index(["session_id", "seq"])

    db.table("llm_requests").create(
        {
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
        },
        pk=("session_id", "id"),
    )
    db.table("llm_requests").create_index(["session_id", "call_id"])

    db.table("turns").create(
        {
            "session_id": str,
            "call_id": str,
            "idx": int,
            "reply": str,
            "code_blocks": int,
            "observation": str,
            "started_at": float,
            "ended_at": float,
            "duration_s": float,
        },
        pk=("session_id", "call_id", "idx"),
    )
    db.table("cells").create(
        {
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
        },
        pk=("session_id", "call_id", "turn", "idx"),
    )

    db.table("events").create(
        {"id": int, "session_id": str, "seq": int, "ts": float, "type": str, "data": str},
        pk="id",
    )
    db.table("events").create_index(["session_id", "seq"], unique=True)

    db.table("sessions").enable_fts(["query", "answer"], create_triggers=True, tokenize="porter")
    db.table("cells").enable_fts(["code"], create_triggers=True, tokenize="porter")


@MIGRATIONS()
def m002_calls_wall_s(db: Database) -> None:
    """`calls.latency_s` held a call's wall time (start to end), not the provider's latency."""
    db.execute("ALTER TABLE calls RENAME COLUMN latency_s TO wall_s")


def _fts_triggers(db: Database, table: str, columns: tuple[str, ...]) -> None:
    """Keep `{table}_fts` equal to `columns` of `table` as rows are written: on insert, on
    delete, and on an update of those columns only (not of a row's status, tokens or cost)."""
    fts, names = f"{table}_fts", ", ".join(columns)
    new = ", ".join(f"new.{column}" for column in columns)
    old = ", ".join(f"old.{column}" for column in columns)
    add = f"INSERT INTO {fts} (rowid, {names}) VALUES (new.rowid, {new});"
    remove = f"INSERT INTO {fts} ({fts}, rowid, {names}) VALUES ('delete', old.rowid, {old});"
    db.execute(f"CREATE TRIGGER {table}_ai AFTER INSERT ON {table} BEGIN {add} END")
    db.execute(f"CREATE TRIGGER {table}_ad AFTER DELETE ON {table} BEGIN {remove} END")
    db.execute(
        f"CREATE TRIGGER {table}_au AFTER UPDATE OF {names} ON {table} BEGIN {remove} {add} END"
    )


def _deferred_fts(db: Database, table: str, columns: tuple[str, ...]) -> None:
    """An external-content FTS5 index `{table}_fts` over `columns`, filled from the saved rows,
    whose triggers queue the rowids of new and changed rows in `{table}_fts_pending` (taking a
    changed row's old text out of the index first, unless it was still queued).

    An FTS5 insert made by a trigger costs ~18 µs against ~3 µs in a plain statement (FTS5 writes
    its pending terms out at every statement savepoint, and a trigger runs in one): too much for
    the ~10,000 calls of a big run. Search indexes the queue in one statement before it looks
    (`store/search.py`).
    """
    fts, names = f"{table}_fts", ", ".join(columns)
    pending = f"{fts}_pending"
    db.execute(
        f'CREATE VIRTUAL TABLE {fts} USING fts5({names}, content="{table}", tokenize="porter")'
    )
    db.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")
    db.execute(f"CREATE TABLE {pending} (row INTEGER PRIMARY KEY)")
    _queue_triggers(db, table, columns)


def _queue_triggers(db: Database, table: str, columns: tuple[str, ...]) -> None:
    """The triggers of `_deferred_fts`: queue new and changed rows of `table` for `{table}_fts`."""
    fts, names = f"{table}_fts", ", ".join(columns)
    pending = f"{fts}_pending"
    old = ", ".join(f"old.{column}" for column in columns)

    def unqueued(row: str) -> str:
        return f"NOT EXISTS (SELECT 1 FROM {pending} WHERE row = {row}.rowid)"

    remove = f"INSERT INTO {fts} ({fts}, rowid, {names}) VALUES ('delete', old.rowid, {old});"
    db.execute(
        f"CREATE TRIGGER {table}_ai AFTER INSERT ON {table} WHEN {unqueued('new')}"
        f" BEGIN INSERT INTO {pending} (row) VALUES (new.rowid); END"
    )
    db.execute(
        f"CREATE TRIGGER {table}_au AFTER UPDATE OF {names} ON {table}"
        f" WHEN {unqueued('old')}"
        f" BEGIN {remove} INSERT INTO {pending} (row) VALUES (new.rowid); END"
    )
    db.execute(
        f"CREATE TRIGGER {table}_ad AFTER DELETE ON {table} BEGIN"
        f" INSERT INTO {fts} ({fts}, rowid, {names}) SELECT 'delete', old.rowid, {old}"
        f" WHERE {unqueued('old')}; DELETE FROM {pending} WHERE row = old.rowid; END"
    )


@MIGRATIONS()
def m003_search_everything_a_run_holds(db: Database) -> None:
    """Search cells' output and errors, calls' prompts, responses and errors, and turns' replies.

    `cells_fts` is rebuilt over more columns; `calls_fts` and `turns_fts` are new; all three are
    filled from the sessions already saved, and kept up to date through their pending queues.
    `sessions_fts` is re-indexed only when a question or an answer changes, no longer at every
    update of a session's running totals.
    """
    for table in ("sessions", "cells"):
        for trigger in ("ai", "ad", "au"):
            db.execute(f"DROP TRIGGER IF EXISTS {table}_{trigger}")
    db.execute("DROP TABLE IF EXISTS cells_fts")
    _fts_triggers(db, "sessions", ("query", "answer"))
    _deferred_fts(db, "cells", ("code", "stdout", "stderr", "error"))
    _deferred_fts(db, "calls", ("prompt", "response", "error"))
    _deferred_fts(db, "turns", ("reply",))


@MIGRATIONS()
def m004_sessions_sandbox(db: Database) -> None:
    """`sessions.sandbox`: the level of the kernel sandbox the run's REPL workers got."""
    db.execute("ALTER TABLE sessions ADD COLUMN sandbox TEXT")


@MIGRATIONS()
def m005_conversations_and_compactions(db: Database) -> None:
    """`sessions.follows` and `conversation_id` link follow-up questions into conversations;
    `compactions` keeps each time an RLM call's history was replaced by a summary."""
    db.execute("ALTER TABLE sessions ADD COLUMN conversation_id TEXT")
    db.execute("ALTER TABLE sessions ADD COLUMN follows TEXT")
    db.table("sessions").create_index(["conversation_id"])
    db.table("compactions").create(
        {
            "id": int,
            "session_id": str,
            "call_id": str,
            "turn": int,
            "tokens_before": int,
            "tokens_after": int,
            "summary": str,
            "ts": float,
        },
        pk="id",
    )
    db.table("compactions").create_index(["session_id", "call_id"])


_KEEPER = "recreated by migration m006: the database held rows of it without the row itself"
_SESSION = (("session_id",), "sessions", ("id",), "CASCADE")
_CALL = (("session_id", "call_id"), "calls", ("session_id", "id"), "CASCADE")
_KEYS: dict[str, tuple[tuple[tuple[str, ...], str, tuple[str, ...], str], ...]] = {
    "documents": (_SESSION, (("sha256",), "texts", ("sha256",), "NO ACTION")),
    "calls": (_SESSION, (("session_id", "parent_id"), "calls", ("session_id", "id"), "CASCADE")),
    "llm_requests": (_SESSION, _CALL),
    "turns": (_SESSION, _CALL),
    "cells": (
        _SESSION,
        (("session_id", "call_id", "turn"), "turns", ("session_id", "call_id", "idx"), "CASCADE"),
    ),
    "compactions": (_SESSION, _CALL),
    "events": (_SESSION,),
}
_TIMES = {
    "sessions": ("started_at", "ended_at", "writer_started"),
    "calls": ("started_at", "ended_at"),
    "llm_requests": ("sent_at", "responded_at"),
    "turns": ("started_at", "ended_at"),
    "cells": ("ended_at",),
    "compactions": ("ts",),
    "events": ("ts",),
}


def _keep_orphans(db: Database) -> None:
    """Give every row whose parent is missing a stand-in parent (status `interrupted`, `error`
    saying why), so that no row is lost and every foreign key holds: sessions first, then the
    calls, the turns of cells, and the texts of documents."""
    children = " UNION ".join(f"SELECT session_id FROM {table}" for table in _KEYS)
    db.execute(
        f"INSERT INTO sessions (id, status, error) SELECT session_id, 'interrupted', ?"
        f" FROM ({children}) WHERE session_id IS NOT NULL"
        " AND session_id NOT IN (SELECT id FROM sessions)",
        [_KEEPER],
    )
    missing_call = (
        "NOT EXISTS (SELECT 1 FROM calls c WHERE c.session_id = x.session_id AND c.id = x.call_id)"
    )
    with_code = " UNION ".join(
        f"SELECT session_id, {column} AS call_id FROM {table}"
        for table, column in (
            ("turns", "call_id"), ("cells", "call_id"), ("compactions", "call_id"),
            ("calls", "parent_id"),
        )
    )  # fmt: skip
    requests = "SELECT DISTINCT session_id, call_id FROM llm_requests"
    for source, kind in ((with_code, "rlm"), (requests, None)):
        db.execute(
            f"INSERT INTO calls (session_id, id, kind, status, error)"
            f" SELECT session_id, call_id, ?, 'interrupted', ? FROM ({source}) x"
            f" WHERE session_id IS NOT NULL AND call_id IS NOT NULL AND {missing_call}",
            [kind, _KEEPER],
        )
    db.execute(
        "INSERT INTO turns (session_id, call_id, idx) SELECT DISTINCT session_id, call_id, turn"
        " FROM cells x WHERE session_id IS NOT NULL AND call_id IS NOT NULL AND turn IS NOT NULL"
        " AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = x.session_id"
        " AND t.call_id = x.call_id AND t.idx = x.turn)"
    )
    db.execute(
        "INSERT INTO texts (sha256) SELECT DISTINCT sha256 FROM documents"
        " WHERE sha256 IS NOT NULL AND sha256 NOT IN (SELECT sha256 FROM texts)"
    )


def _add_foreign_keys(db: Database, table: str) -> None:
    """Rebuild `table` with its foreign keys (rowids kept, so the external-content full-text
    indexes still match), then put back the triggers that dropping the old table removed."""
    triggers = [
        sql
        for (sql,) in db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", [table]
        ).fetchall()
    ]
    keys = [
        ForeignKey(
            table,
            columns[0] if len(columns) == 1 else None,
            other,
            others[0] if len(others) == 1 else None,
            columns=columns,
            other_columns=others,
            is_compound=len(columns) > 1,
            on_delete=on_delete,
        )
        for columns, other, others, on_delete in _KEYS[table]
    ]
    db.table(table).transform(add_foreign_keys=keys)
    for sql in triggers:
        db.execute(sql)


@MIGRATIONS()
def m006_foreign_keys_iso_times_and_indexes(db: Database) -> None:
    """A database an analyst can browse (in Datasette, say) as well as the app can.

    Foreign keys from every table to `sessions` and from a call's rows to `calls` (and a cell to
    its turn, a document to its text), `ON DELETE CASCADE` except for texts. Tables are rebuilt
    with their rowids and triggers; a row whose parent was missing gets a stand-in parent
    (`_keep_orphans`). Views `{table}_view` add each time as an ISO-8601 UTC string
    (`started_at_iso`). Indexes for the filters an analyst uses (`calls.status`, `calls.model`,
    `events.type`) and for the order in which the app reads a session's requests.

    Runs with foreign keys off (the store turns them on once migrated), as a rebuild must.
    """
    _keep_orphans(db)
    for table in _KEYS:
        _add_foreign_keys(db, table)
    for table, columns in _TIMES.items():
        iso = ", ".join(
            f"strftime('%Y-%m-%dT%H:%M:%fZ', {column}, 'unixepoch') AS {column}_iso"
            for column in columns
        )
        db.execute(f"CREATE VIEW {table}_view AS SELECT *, {iso} FROM {table}")
    db.table("calls").create_index(["status"])
    db.table("calls").create_index(["model"])
    db.table("events").create_index(["type"])
    db.table("documents").create_index(["sha256"])
    db.execute("DROP INDEX idx_llm_requests_session_id_call_id")
    db.table("llm_requests").create_index(["session_id", "call_id", "sent_at"])
    db.table("llm_requests").create_index(["session_id", "sent_at", "responded_at"])


@MIGRATIONS()
def m007_opening_messages_and_cell_variables(db: Database) -> None:
    """What each call's conversation opened with and what each cell left in the REPL.

    `calls.system_sha256` names the call's system prompt in `texts` (kept once however many calls
    share it), `calls.opening` holds the user message(s) after it as a JSON list of messages, and
    `cells.variables` the model's variables after the cell (JSON: name to a short value). Calls
    and cells saved before this migration have them NULL.
    """
    db.execute("ALTER TABLE calls ADD COLUMN system_sha256 TEXT")
    db.execute("ALTER TABLE calls ADD COLUMN opening TEXT")
    db.execute("ALTER TABLE cells ADD COLUMN variables TEXT")


@MIGRATIONS()
def m008_unfinished_turns_searchable(db: Database) -> None:
    """`turns.unfinished_reply`: the reply a turn's request brought back when the turn never
    finished (its call ended, or the app was killed, while its code ran), as the exports show
    it; `turns_fts` is rebuilt over `reply` and `unfinished_reply`, so search finds that code.

    The turns of calls that had already ended get theirs from their requests; a session still
    `running` gets them when it ends (or is found interrupted).
    """
    db.execute("ALTER TABLE turns ADD COLUMN unfinished_reply TEXT")
    db.execute(
        """UPDATE turns SET unfinished_reply = (
            SELECT r.content FROM llm_requests r WHERE r.session_id = turns.session_id
            AND r.call_id = turns.call_id AND r.turn = turns.idx AND r.content != ''
            ORDER BY r.sent_at DESC, r.responded_at DESC, r.rowid DESC LIMIT 1)
        WHERE reply IS NULL AND EXISTS (SELECT 1 FROM calls c WHERE c.session_id =
            turns.session_id AND c.id = turns.call_id AND c.status != 'running')"""
    )
    for trigger in ("ai", "au", "ad"):
        db.execute(f"DROP TRIGGER IF EXISTS turns_{trigger}")
    db.execute("DROP TABLE turns_fts")
    columns = ("reply", "unfinished_reply")
    db.execute(
        'CREATE VIRTUAL TABLE turns_fts USING fts5(reply, unfinished_reply, content="turns",'
        ' tokenize="porter")'
    )
    # Rows still queued are indexed by the next search, as before.
    db.execute(
        "INSERT INTO turns_fts (rowid, reply, unfinished_reply)"
        " SELECT rowid, reply, unfinished_reply FROM turns"
        " WHERE rowid NOT IN (SELECT row FROM turns_fts_pending)"
    )
    _queue_triggers(db, "turns", columns)


@MIGRATIONS()
def m009_requests_charged_their_hold(db: Database) -> None:
    """`llm_requests.reserved_output_tokens` and `reserved_cost_usd`: what a request held, so a
    request the app was stopped in the middle of is charged its hold, as the live ledger charges
    a request cancelled in flight (the provider may have billed it)."""
    db.execute("ALTER TABLE llm_requests ADD COLUMN reserved_output_tokens INTEGER")
    db.execute("ALTER TABLE llm_requests ADD COLUMN reserved_cost_usd REAL")


@MIGRATIONS()
def m010_documents_type_and_sections(db: Database) -> None:
    """`documents.type` (the loader's type: pdf, spreadsheet, email ...), `documents.sections`
    (JSON: the sheets, slides, pages or chapters at their offsets in the text) and
    `documents.attached_to` (the name of the document that held it: a message, for an
    attachment), so a follow-up or a replay gives the model the same `context_meta`."""
    db.execute("ALTER TABLE documents ADD COLUMN type TEXT")
    db.execute("ALTER TABLE documents ADD COLUMN sections TEXT")
    db.execute("ALTER TABLE documents ADD COLUMN attached_to TEXT")


@MIGRATIONS()
def m011_answer_sources(db: Database) -> None:
    """`calls.answer_sources` (JSON): the quotes and spans a call's answer was submitted with,
    as the model gave them; review checks them against the documents."""
    db.execute("ALTER TABLE calls ADD COLUMN answer_sources TEXT")


@MIGRATIONS()
def m012_sessions_ran_on(db: Database) -> None:
    """`sessions.ran_on` (JSON): where a trial or a batch question ran, for runs an executor
    sent (`{"executor": "local"|"ray", "host", "address", "node_id", "attempt"}`)."""
    db.execute("ALTER TABLE sessions ADD COLUMN ran_on TEXT")


@MIGRATIONS()
def m013_prompts_stored_once(db: Database) -> None:
    """Each prompt stored once, and a session's stored text counted against its cap.

    A long prompt (`store/prompts.py`) is kept once: as the span of one of the session's
    documents it repeats (`calls.prompt_document`, `prompt_start`, `prompt_end`), or in `texts`
    (`calls.prompt_sha256`), however many calls send it; `calls.prompt` keeps its head, for search
    and lists. `calls.prompt_chars` is its length, `calls.prompt_note` says why `prompt` holds
    only part of it (a call refused before it was sent, the session's cap). The event log no
    longer repeats a prompt its call's row holds: a `CallStarted` without `prompt` reads it from
    there. `sessions.stored_chars` and `cut_chars`: the text the session keeps, and what its cap
    cut.

    Saved sessions are brought to this form; the pages their second copies held are reused by
    later writes (the file does not shrink by itself).
    """
    from rlm_desktop.store.prompt_migration import migrate_prompts

    for column, kind in (
        ("prompt_sha256", "TEXT REFERENCES texts(sha256)"),
        ("prompt_document", "INTEGER"),
        ("prompt_start", "INTEGER"),
        ("prompt_end", "INTEGER"),
        ("prompt_chars", "INTEGER"),
        ("prompt_note", "TEXT"),
    ):
        db.execute(f"ALTER TABLE calls ADD COLUMN {column} {kind}")
    db.execute("ALTER TABLE sessions ADD COLUMN stored_chars INTEGER")
    db.execute("ALTER TABLE sessions ADD COLUMN cut_chars INTEGER")
    db.table("calls").create_index(["prompt_sha256"])
    migrate_prompts(db.conn)


@MIGRATIONS()
def m014_sessions_origin(db: Database) -> None:
    """Where an imported session came from: `sessions.origin_name` (the file's name, never its
    folder), `origin_format` (`rlm-desktop`, `rlms` or `dspy`), `imported_at`, `origin_sha256`
    (the digest of the file's bytes, so the same file is not imported twice) and
    `origin_left_out` (what the file could not carry, a JSON list of lines). A session run here
    has them NULL; an imported one is read-only."""
    for column, kind in (
        ("origin_name", "TEXT"),
        ("origin_format", "TEXT"),
        ("imported_at", "REAL"),
        ("origin_sha256", "TEXT"),
        ("origin_left_out", "TEXT"),
    ):
        db.execute(f"ALTER TABLE sessions ADD COLUMN {column} {kind}")
    db.table("sessions").create_index(["origin_sha256"])


@MIGRATIONS()
def m015_known_files(db: Database) -> None:
    """`known_files`: the text a file gave the last time it was stored, by its path, size and
    modification time, so a run over the same folder again neither hashes nor stores it again.
    Only files whose text was stored exactly as loaded (the scrub changed nothing) are listed."""
    db.table("known_files").create(
        {"path": str, "size": int, "mtime_ns": int, "chars": int, "sha256": str},
        pk="path",
    )
