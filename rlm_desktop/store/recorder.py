"""Records a live run: a bus listener that only buffers events, and the store's writing thread
(`write_thread.py`) that writes them, and the run's documents, beside the run.

The listener appends to a buffer; the thread writes it once no event has been added for
`FLUSH_INTERVAL_S`, or `LONGEST_WAIT_S` after the oldest (a fan-out's requests go out first, and
are recorded together while their replies are awaited, not while they leave), and at once at
every turn boundary of a root call, at its end, at `RunFinished`, and when the buffer holds
`MAX_DEFERRED` events — so a killed process loses at most a fraction of a second of its run.
The session's row goes in with its first events; its documents follow, a chunk per transaction
between event batches (`documents_beside.py`). `flush` and `close` wait until everything
buffered, documents included, is written.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from typing import Protocol

from rlm_desktop.engine.events import CallFinished, CallStarted, Event, RunFinished, TurnExecuted
from rlm_desktop.store.documents_beside import DocumentsBeside
from rlm_desktop.store.events_process import EventsProcess, WriterFailed, WritingStopped
from rlm_desktop.store.redact import Redactor
from rlm_desktop.store.write_thread import WriteThread
from rlm_desktop.store.writer import Row, SessionWriter
from rlm_desktop.store.writing_connection import immediate_transaction

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.05
LONGEST_WAIT_S = 0.25
"""The longest an event waits while others keep coming (what a killed process can lose)."""
MAX_BUFFER = 1000
"""The most events one transaction writes."""
MAX_DEFERRED = 4 * MAX_BUFFER
RETRY_AFTER_S = 1.0
PROCESS_AFTER = 2_000
"""Events of a session (written or waiting) past which its writing moves to the store's writing
process (started then, if it is not running). A busy run's loop leaves the writing thread too
little of the interpreter to keep up (a thousand events a second, against the 16,000 a second of
a 10,000-sub-call fan-out), while the thread needs it only to hand the process each batch; a
small run (a 256-way fan-out has ~1,000 events) costs no process."""


class RecordingSink(Protocol):
    """What a recorder needs from the store: its writing thread, and three notices."""

    @property
    def writing(self) -> WriteThread:
        """The thread that writes for every recorder of the store."""
        ...

    def mark_interrupted(self, session_id: str) -> None:
        """End a session that stopped without `RunFinished`."""
        ...

    def recorder_closed(self, recorder: Recorder) -> None:
        """The recorder has written its last event."""
        ...

    def describe(self, error: BaseException) -> str:
        """What `error` means for the database, and what to do about it, in one line."""
        ...


class Recorder:
    """Writes one run's events and documents to the store as they happen. Made by `Store.record`.

    `events_written` and `flushes` say what has been written; `write_seconds` is the time the
    run's own thread spent on recording (buffering and waiting in `flush`), `thread_seconds`
    the writing thread's time and `thread_cpu_seconds` the CPU it used in that time (the rest
    it waited: for the disk, or for the interpreter's lock, which it shares with the run).
    """

    def __init__(
        self,
        sink: RecordingSink,
        session: Row,
        documents: DocumentsBeside,
        redactor: Redactor,
        attach: Callable[[Callable[[Event], None]], Callable[[], None]],
    ) -> None:
        self.session_id: str = session["id"]
        self._sink = sink
        self._thread = sink.writing
        self._lock = self._thread.condition
        self._session: Row | None = session
        """The session's row until it is written with the first events."""
        self._documents = documents
        self._redactor = redactor
        self._writer: SessionWriter | None = None
        self._process: EventsProcess | None = None
        """The store's writing process, once this session's writer has moved there."""
        self._stays = False
        """The move was tried and failed: the thread writes this session to its end."""
        self._stopped: WritingStopped | None = None
        """The writing process stopped with this session's writer: nothing more can be written."""
        self._buffer: list[Event] = []
        self._roots: set[str] = set()
        self._due = False
        self._urgent: int | None = None
        """While a `flush` waits, the refusals met before it: write now, even within
        `RETRY_AFTER_S` of one of those (once, not again after a new refusal)."""
        self._busy = False
        self._oldest = 0.0
        self._newest = 0.0
        self._retry_at = 0.0
        self._refused: sqlite3.Error | None = None
        self._documents_refused: sqlite3.Error | None = None
        """The last refusal of a chunk of documents (events written since do not clear it)."""
        self._refusals = 0
        self._left_out: list[str] = []
        self.finished = False
        self.events_written = 0
        self.flushes = 0
        self.write_seconds = 0.0
        self.thread_seconds = 0.0
        self.thread_cpu_seconds = 0.0
        self._thread.add(self)
        self._detach: Callable[[], None] | None = attach(self._on_event)

    def _on_event(self, event: Event) -> None:
        if not event.stored:
            return
        started = time.perf_counter()
        if isinstance(event, CallStarted) and event.parent_id is None:
            self._roots.add(event.call_id)
        boundary = isinstance(event, RunFinished) or (
            isinstance(event, TurnExecuted | CallFinished) and event.call_id in self._roots
        )
        with self._lock:
            self._newest = time.monotonic()
            if not self._buffer:
                self._oldest = self._newest
                self._lock.notify_all()
            self._buffer.append(event)
            if boundary or len(self._buffer) >= MAX_DEFERRED:
                self._due = True
                self._lock.notify_all()
        if isinstance(event, RunFinished):
            self.finished = True
            self._stop_listening()
        self.write_seconds += time.perf_counter() - started

    def ready_in(self, now: float) -> float | None:
        """Seconds until this recorder has something to write (the writing thread asks)."""
        if self._busy or self._stopped is not None:
            return None
        if self._session is not None and not self._buffer:
            return None
        if not self._buffer and not self._documents.left:
            return None
        if now < self._retry_at and self._urgent != self._refusals:
            return self._retry_at - now
        if self._due or self._urgent is not None or self._documents.left:
            return 0.0
        return min(self._newest + FLUSH_INTERVAL_S, self._oldest + LONGEST_WAIT_S) - now

    def work(self, connection: sqlite3.Connection) -> None:
        """Write the next piece: the session's row with its first documents, a chunk of
        documents, or a batch of events (the writing thread calls this)."""
        with self._lock:
            self._busy = True
        started = time.perf_counter()
        cpu = time.thread_time()
        try:
            # The session's row and its documents go in before its events: a long prompt that
            # repeats a slice of a document is kept as that slice only once the document is
            # stored. A refused chunk does not hold the events back.
            if self._documents.left and self._store_documents(connection) and self._documents.left:
                return
            with self._lock:
                batch, self._buffer = self._buffer[:MAX_BUFFER], self._buffer[MAX_BUFFER:]
                if not self._buffer:
                    self._due = False
            if batch:
                self._write_batch(connection, batch)
        finally:
            self.thread_seconds += time.perf_counter() - started
            self.thread_cpu_seconds += time.thread_time() - cpu
            with self._lock:
                self._busy = False

    def _store_documents(self, connection: sqlite3.Connection) -> bool:
        """Store the next chunk of documents; whether it went in."""
        try:
            with immediate_transaction(connection):
                if self._session is not None:
                    self._session_writer(connection).begin(self._session)
                chunk = self._documents.store_chunk(connection)
        except sqlite3.Error as error:
            self._refuse(error)
            self._documents_refused = error
            return False
        except Exception as error:  # not the database's refusal: trying again would not help
            log.warning("session %s: documents not stored", self.session_id, exc_info=True)
            left = self._documents.abandon()
            self._left_out.append(f"{left} documents ({type(error).__name__}: {error})")
            return False
        self._session = None
        self._documents_refused = None
        self._documents.committed(chunk)
        if self._process is None:
            self._session_writer(connection).documents_stored(self._documents.texts)
            return True
        try:  # the writer has moved: it reads the texts back itself
            self._process.documents_stored(self.session_id, self._documents.stored)
        except (sqlite3.Error, WriterFailed) as error:
            self._hold([], error)
        return True

    def _session_writer(self, connection: sqlite3.Connection) -> SessionWriter:
        if self._writer is None:
            self._writer = SessionWriter(connection, self.session_id, self._redactor)
        return self._writer

    def _write_batch(self, connection: sqlite3.Connection, batch: list[Event]) -> None:
        try:
            self._write(connection, batch)
        except sqlite3.IntegrityError:  # an event the tables refuse (no parent row): not retried
            log.info("session %s: writing event by event", self.session_id, exc_info=True)
            self._write_singly(connection, batch)
        except sqlite3.Error as error:
            self._hold(batch, error)
        except Exception:
            log.info("session %s: writing event by event", self.session_id, exc_info=True)
            self._write_singly(connection, batch)

    def _write(self, connection: sqlite3.Connection, batch: list[Event]) -> None:
        if self._process is None and self._moves_out(len(batch)):
            self._move_out()
        if self._process is not None:
            self._process.write(self.session_id, batch)
        else:
            with immediate_transaction(connection):
                writer = self._session_writer(connection)
                if self._session is not None:
                    writer.begin(self._session)
                writer.write(batch)
        self._session = None
        self._refused = None
        self.events_written += len(batch)
        self.flushes += 1

    def _moves_out(self, batch: int) -> bool:
        """Whether this session's writing moves to the store's writing process before writing
        `batch` events (asking for the process once it is due)."""
        if self._stays or self._writer is None or self._session is not None or self.finished:
            return False  # a run that has ended: its loop is idle, the thread writes at speed
        if self.events_written + batch + len(self._buffer) < PROCESS_AFTER:
            return False
        if not self._thread.process.ready():
            self._stays = True
            return False
        return True

    def _move_out(self) -> None:
        assert self._writer is not None
        process = self._thread.process
        try:
            process.resume(self.session_id, self._writer.state(), self._redactor)
        except (sqlite3.Error, WriterFailed) as error:  # the writer here is still whole
            log.info("session %s: written by the thread: %s", self.session_id, error)
            self._stays = True
            return
        self._process, self._writer = process, None

    def _refuse(self, error: sqlite3.Error) -> None:
        log.info("session %s: the database refused a write: %s", self.session_id, error)
        self._refused = error
        self._refusals += 1
        self._retry_at = time.monotonic() + RETRY_AFTER_S

    def _hold(self, batch: list[Event], error: sqlite3.Error | WriterFailed) -> None:
        """Keep `batch` for the next try: the database refused it, not the events (or the
        writing process stopped: then it is kept to be reported, not tried again)."""
        with self._lock:
            self._buffer = batch + self._buffer
            if isinstance(error, WritingStopped):
                self._stopped = error
        if isinstance(error, sqlite3.Error):
            self._refuse(error)

    def _write_singly(self, connection: sqlite3.Connection, batch: list[Event]) -> None:
        for position, event in enumerate(batch):
            try:
                self._write(connection, [event])
            except sqlite3.Error as error:
                if not isinstance(error, sqlite3.IntegrityError):
                    self._hold(batch[position:], error)
                    return
                self._left_out.append(f"{type(event).__name__} ({error})")
            except Exception as error:
                log.info("session %s: cannot store %s", self.session_id, event, exc_info=True)
                self._left_out.append(f"{type(event).__name__} ({type(error).__name__}: {error})")

    def flush(self) -> None:
        """Write every buffered event, and the documents not stored yet, now; return once done.

        If the database refuses (disk full, read-only, locked), what it refused stays buffered
        and is tried again after `RETRY_AFTER_S`; an event the writer cannot take at all is left
        out, the rest written around it. Either way `warnings` says so once the run is closed.
        """
        started = time.perf_counter()
        with self._lock:
            refusals = self._urgent = self._refusals
        try:
            self._thread.wait_for(
                lambda: not self._busy and (not self._left() or self._refusals > refusals)
            )
        finally:
            with self._lock:
                self._urgent = None
            self.write_seconds += time.perf_counter() - started

    def _left(self) -> bool:
        """Whether anything is still to be written (a session not begun has no documents yet;
        one whose writing process stopped, nothing that can be)."""
        if self._stopped is not None:
            return False
        return bool(self._buffer) or (self._session is None and self._documents.left > 0)

    @property
    def documents_known_again(self) -> int:
        """How many of the run's documents were known again (`known_files`): not hashed, not
        stored a second time."""
        return self._documents.known_again

    @property
    def warnings(self) -> list[str]:
        """What of the run could not be saved, one line each (empty when all of it was)."""
        found = []
        if self._left_out:
            found.append(
                f"session {self.session_id}: {len(self._left_out)} events could not be stored"
                f" and were left out: {', '.join(self._left_out[:3])}"
            )
        unsaved = []
        if self._buffer:
            unsaved.append(f"{len(self._buffer)} events could not be written")
        if self._documents.left and (self._buffer or self._session is None):
            unsaved.append(f"{self._documents.left} documents could not be stored")
        refused = self._refused or self._documents_refused
        if unsaved and refused is not None:
            how = "not saved" if self._session is not None else "not saved in full"
            found.append(
                f"session {self.session_id} was {how}: {', '.join(unsaved)}:"
                f" {self._sink.describe(refused)}"
            )
        return found

    def _stop_listening(self) -> None:
        if self._detach is not None:
            self._detach()
            self._detach = None

    def close(self) -> None:
        """Flush and stop listening; a run that never finished, or whose end could not be
        written, is marked `interrupted` (`warnings` then says what was not saved)."""
        self._stop_listening()
        self.flush()
        self._thread.remove(self)
        if (self._buffer or not self.finished) and self._session is None:
            try:
                self._sink.mark_interrupted(self.session_id)
            except sqlite3.Error as error:
                log.info("session %s: not marked interrupted: %s", self.session_id, error)
            self.finished = True
        self._sink.recorder_closed(self)
