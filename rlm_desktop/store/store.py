"""The session store: one SQLite file that keeps every run for review, replay and export."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from sqlite_utils import Database

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.context import ContextDocument, sections_from_json
from rlm_desktop.engine.events import Event, event_from_dict
from rlm_desktop.engine.kept_documents import chars_of
from rlm_desktop.store import integrity, queries
from rlm_desktop.store import search as fulltext
from rlm_desktop.store.documents_beside import DocumentsBeside
from rlm_desktop.store.liveness import current_writer, writer_is_dead
from rlm_desktop.store.migrations import MIGRATIONS
from rlm_desktop.store.problems import database_problem
from rlm_desktop.store.prompts import PromptReader
from rlm_desktop.store.recorder import Recorder
from rlm_desktop.store.redact import Redactor
from rlm_desktop.store.room import needed_bytes, room_problem
from rlm_desktop.store.texts import StoredDocuments, read_text
from rlm_desktop.store.write_thread import WriteThread
from rlm_desktop.store.writer import logged_event, session_row
from rlm_desktop.store.writing_connection import immediate_transaction

log = logging.getLogger(__name__)
_SESSION_TABLES = ("events", "cells", "turns", "llm_requests", "calls", "documents", "compactions")


class StoreError(Exception):
    """A request the store cannot honour; the message says what to do instead."""


class SessionNotFound(StoreError, LookupError):
    """No session (or more than one) matches the id given; the message says what to do."""


class SessionBusy(StoreError):
    """The session is still being recorded by a live process."""


class SessionDamaged(StoreError):
    """A saved session whose record does not hold to the app's tables: never read further."""


class DatabaseUnavailable(StoreError):
    """The database file cannot be opened, read or written; the message says why and what to do."""


class DiskFull(StoreError):
    """The data folder's disk has no room to record a run; the message says where and what to do."""


class RecordableRun(Protocol):
    """What `Store.record` needs from a run: its id (the session id) and its event bus."""

    @property
    def run_id(self) -> str: ...

    @property
    def bus(self) -> EventBus: ...


class Store:
    """Opens (creating and migrating) the database, records runs and reads saved sessions back.

    Opening also marks sessions whose writing process has died as `interrupted`. The object may
    be shared between threads; every statement runs under one lock.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.RLock()
        self._recorders: list[Recorder] = []
        self.writing = WriteThread(path)
        """The thread that writes live runs, on a connection of its own."""
        self._sound: set[str] = set()
        """Sessions whose record was checked and holds to the app's tables."""
        conn: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False)
            self.db = Database(conn)
            self.db.enable_wal()
            self.db.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
            self.db.execute("PRAGMA foreign_keys=ON")  # after migrating: a rebuild needs them off
            self.reap_dead_writers()
        except (sqlite3.Error, OSError) as error:
            if conn is not None:
                conn.close()
            raise DatabaseUnavailable(self.describe(error)) from error

    def _migrate(self) -> None:
        try:
            MIGRATIONS.apply(self.db)
        except sqlite3.OperationalError:
            # Another process migrated at the same moment; what is left pending is ours to apply.
            MIGRATIONS.apply(self.db)

    def record(
        self,
        run: RecordableRun,
        documents: Sequence[ContextDocument] = (),
        secrets: Iterable[str | None] = (),
    ) -> Recorder:
        """Keep `run` as it happens: attach a recorder to its bus before `execute()`.

        The session appears with the first events (a run that fails before starting leaves
        nothing behind). Raises `DatabaseUnavailable` when the database cannot be written and
        `DiskFull` when its disk has no room for the run (see `room.py`): before any request.
        The documents' texts are kept so the session can be reviewed after the files move:
        stored beside the run by the store's writing thread, not before its first request. The
        run's API key (`run.credentials.api_key` when exposed, or `secrets`), and any
        secret-looking environment value, is scrubbed from everything written.
        """
        if self._taken_if_writable(run.run_id):
            raise StoreError(f"session {run.run_id} already exists: give the run a new id")
        problem = room_problem(self.path.parent, needed_bytes(chars_of(documents)))
        if problem is not None:
            raise DiskFull(problem)
        credentials = getattr(run, "credentials", None)
        redactor = Redactor.for_run(getattr(credentials, "api_key", None), extra=secrets)
        session = session_row(run.run_id, current_writer())
        beside = DocumentsBeside(run.run_id, documents, redactor)
        recorder = Recorder(self, session, beside, redactor, run.bus.add_listener)
        self._recorders.append(recorder)
        return recorder

    def _taken_if_writable(self, session_id: str) -> bool:
        """Whether `session_id` is taken, asked in a write that is then undone, so that a
        database this process cannot write stops a run before it starts."""
        with self.lock:
            try:
                self.db.execute("BEGIN IMMEDIATE")
                version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
                self.db.execute(f"PRAGMA user_version = {version}")
                taken = self.db.execute("SELECT 1 FROM sessions WHERE id = ?", [session_id])
                return taken.fetchone() is not None
            except sqlite3.Error as error:
                raise DatabaseUnavailable(self.describe(error)) from error
            finally:
                if self.db.conn.in_transaction:
                    self.db.conn.rollback()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection, held under the store's lock inside one transaction, taken for
        writing as it begins so that it waits its turn behind the writing thread's
        (`immediate_transaction`); inside one already, a savepoint of it."""
        with self.lock:
            conn = self.db.conn
            if conn.in_transaction:
                with self.db.atomic():
                    yield conn
                return
            with immediate_transaction(conn):
                yield conn

    def describe(self, error: BaseException) -> str:
        """`error`, met using this database, as one line that says what to do about it."""
        return database_problem(error, self.path)

    def recorder_closed(self, recorder: Recorder) -> None:
        """Forget a recorder that has written its last event."""
        if recorder in self._recorders:
            self._recorders.remove(recorder)

    def reap_dead_writers(self) -> list[str]:
        """Mark `running` sessions whose writer is gone as `interrupted`; return their ids."""
        with self.lock:
            rows = self.db.execute(
                "SELECT id, writer_pid, writer_started, writer_host FROM sessions"
                " WHERE status = 'running'"
            ).fetchall()
        dead = [row[0] for row in rows if writer_is_dead(row[1], row[2], row[3])]
        try:
            for session_id in dead:
                self.mark_interrupted(session_id)
        except sqlite3.OperationalError as error:  # a read-only database can still be read
            log.info("sessions of dead writers left as they are: %s", error)
            return []
        return dead

    def mark_interrupted(self, session_id: str) -> None:
        """End a session that stopped without `RunFinished`, with totals from what was written."""
        with self.transaction():
            queries.mark_interrupted(self.db.conn, session_id)

    def note_ran_on(self, session_id: str, ran_on: dict[str, Any]) -> None:
        """Record where a session ran (`sessions.ran_on`); nothing when it left no session."""
        with self.transaction():
            self.db.execute(
                "UPDATE sessions SET ran_on = ? WHERE id = ?", [json.dumps(ran_on), session_id]
            )

    def resolve(self, session_id: str) -> str:
        """The full id of the session `session_id` names (a full id or a unique prefix); raises
        `SessionNotFound`, or `SessionDamaged` for a session whose record does not hold to the
        app's tables (checked once: `integrity`)."""
        with self.lock:
            full_id = queries.resolve(self.db.conn, session_id, SessionNotFound)
            if full_id not in self._sound:
                problem = integrity.damage(self.db.conn, full_id)
                if problem is not None:
                    raise SessionDamaged(
                        f"session {full_id} is damaged: {problem} (a shared or hand-made "
                        "database?); the app does not act on it"
                    )
                self._sound.add(full_id)
            return full_id

    def list_sessions(self, search: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """Saved sessions, newest first; with `search`, only those whose text matches."""
        self.reap_dead_writers()
        if search is not None:
            self._index_pending()
        with self.lock:
            return queries.list_sessions(self.db.conn, search, limit)

    def session(self, session_id: str) -> dict[str, Any]:
        """`{"session", "calls", "turns"}` as `sessions show --json` prints it (no prompt texts)."""
        self.reap_dead_writers()
        with self.lock:
            full_id = self.resolve(session_id)
            return queries.session(self.db.conn, full_id)

    def call(self, session_id: str, call_id: str) -> dict[str, Any]:
        """One call with its whole prompt (`prompt_chars` long; `prompt_note` says why only its
        head was kept, when it was cut), response, answer and LLM requests (for a detail pane)."""
        with self.lock:
            full_id = self.resolve(session_id)
            found = queries.call(self.db.conn, full_id, call_id)
        if found is None:
            raise SessionNotFound(f"session {full_id} has no call {call_id!r}")
        return found

    def replay(self, session_id: str, chunk: int = 1000) -> Iterator[Event]:
        """The session's events in their original order, with their original timestamps.

        A session that was interrupted simply ends without `RunFinished`; its status says why.
        """
        with self.lock:
            full_id = self.resolve(session_id)
        prompts = PromptReader(self.db.conn, full_id)
        last = -1
        while True:
            with self.lock:
                rows = self.db.execute(
                    "SELECT seq, ts, type, data FROM events WHERE session_id = ? AND seq > ?"
                    " ORDER BY seq LIMIT ?",
                    [full_id, last, chunk],
                ).fetchall()
                logged = [
                    (seq, ts, kind, logged_event(kind, data, prompts))
                    for seq, ts, kind, data in rows
                ]
            for seq, ts, kind, fields in logged:
                last = seq
                yield event_from_dict({**fields, "type": kind, "ts": ts, "run_id": full_id})
            if len(rows) < chunk:
                return

    def delete(self, session_id: str) -> str:
        """Delete a finished session and everything it owns; returns the full id deleted.

        Raises `SessionNotFound` for an unknown id and `SessionBusy` while it is being recorded.
        """
        with self.transaction():
            full_id = self.resolve(session_id)
            status, pid, started, host = self.db.execute(
                "SELECT status, writer_pid, writer_started, writer_host FROM sessions WHERE id = ?",
                [full_id],
            ).fetchone()
            if status == "running" and not writer_is_dead(pid, started, host):
                raise SessionBusy(
                    f"session {full_id} is still running (process {pid}): "
                    "cancel the run or wait for it to end, then delete it"
                )
            for table in _SESSION_TABLES:
                self.db.execute(f"DELETE FROM {table} WHERE session_id = ?", [full_id])
            self.db.execute("DELETE FROM sessions WHERE id = ?", [full_id])
            self.db.execute(
                "DELETE FROM texts WHERE sha256 NOT IN"
                " (SELECT sha256 FROM documents WHERE sha256 IS NOT NULL"
                " UNION SELECT system_sha256 FROM calls WHERE system_sha256 IS NOT NULL"
                " UNION SELECT prompt_sha256 FROM calls WHERE prompt_sha256 IS NOT NULL)"
            )
        return full_id

    def search(self, text: str, limit: int = 100) -> list[dict[str, Any]]:
        """The best `limit` matches of `text` in anything a run keeps, best first.

        Each hit names its session, its place (`field`, `call_id`, `turn`, `cell`; `place` says
        it in words) and a `snippet` with the matched words in brackets.
        """
        self._index_pending()
        with self.lock:
            return fulltext.search(self.db.conn, text, limit)

    def search_sessions(
        self, text: str, limit: int = 200, hits_per_session: int = 3
    ) -> list[dict[str, Any]]:
        """The sessions holding `text`, newest first, as `list_sessions` gives them, each with
        its best `hits_per_session` hits (as `search` gives them), `matches` (how many places
        hold the text) and `more` (the places not among the hits)."""
        self.reap_dead_writers()
        self._index_pending()
        with self.lock:
            found = fulltext.search_sessions(self.db.conn, text, limit, hits_per_session)
            listed = queries.sessions_with_ids(self.db.conn, [s["id"] for s in found])
        rows = {row["id"]: row for row in listed}
        return [{**rows[session["id"]], **session} for session in found]

    def _index_pending(self) -> None:
        """Bring the full-text indexes up to date with what has been written (see `search`)."""
        with self.transaction():
            fulltext.catch_up(self.db.conn)

    def document_texts(self, session_id: str) -> list[tuple[str, str]]:
        """`(name, text)` of each document of the session, in load order (as saved)."""
        return [(name, text) for name, text in self._documents_of(session_id, "d.name, t.text")]

    def stored_documents(self, session_id: str) -> StoredDocuments:
        """`document_texts` holding only the documents' names and lengths: each text is read
        back when it is asked for (use it while the store is open)."""
        return StoredDocuments(
            self._documents_of(session_id, "d.name, t.sha256, t.chars"), self._text
        )

    def _text(self, digest: str) -> str:
        with self.lock:
            text = read_text(self.db.conn, digest)
        if text is None:
            raise SessionDamaged(f"a document's text ({digest[:12]}) is no longer stored")
        return text

    def context_documents(self, session_id: str) -> list[ContextDocument]:
        """The session's documents as the engine took them (text, type, sections, the document
        each was attached to), in load order, for a follow-up or a re-run."""
        columns = "d.name, t.text, d.path, d.tokens, d.type, d.sections, d.attached_to"
        return [saved_document(*row) for row in self._documents_of(session_id, columns)]

    def _documents_of(self, session_id: str, columns: str) -> list[Any]:
        """`columns` of the session's stored documents (`d`) and their texts (`t`), in load
        order (a session id or a unique prefix)."""
        with self.lock:
            full_id = self.resolve(session_id)
            return list(
                self.db.execute(
                    f"SELECT {columns} FROM documents d JOIN texts t ON t.sha256 = d.sha256"
                    " WHERE d.session_id = ? AND t.text IS NOT NULL ORDER BY d.position",
                    [full_id],
                ).fetchall()
            )

    def close(self) -> None:
        """Close every recorder still attached (its run is marked `interrupted`), then the file."""
        for recorder in list(self._recorders):
            recorder.close()
        self.writing.close()
        with self.lock:
            self.db.close()


def saved_document(
    name: str,
    text: str,
    path: str | None,
    tokens: int | None,
    kind: str | None,
    sections: str | None,
    attached_to: str | None,
) -> ContextDocument:
    """A `documents` row (joined with its text) as a `ContextDocument`."""
    return ContextDocument(
        name=name, text=text, path=path or "", tokens=tokens, type=kind or "",
        sections=sections_from_json(sections, len(text)), attached_to=attached_to,
    )  # fmt: skip
