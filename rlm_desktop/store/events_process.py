"""The store's writing process: a big run's events written beside the app, not in it.

Writing an event costs the writing thread ~20 µs of the interpreter, which it shares with the
run's event loop: over a fan-out of thousands of sub-calls the thread fell behind, and the run
waited for it at its end (a fifth of a 10,000-sub-call run's time on this machine). Once a session
has written `Recorder.PROCESS_AFTER` events, its `SessionWriter` moves here (`resume`, with what it
knew, `SessionWriter.state`), and the thread only sends each batch and waits for its answer.

The process is started with "spawn" (no fork, so the same on Windows and macOS), on first need,
and serves every session of one store, one message at a time; it writes nothing else. It ignores
Ctrl-C (the app stops a run on it, then writes its end here) and ends when the app closes its end
of the pipe, or dies. Its answers are the errors `SessionWriter` raised, rebuilt in the app as the
same classes (`sqlite3` errors with their codes), so the recorder handles them as it handles the
thread's; a process that stopped is `WritingStopped`, and what it had not written is reported.
It holds no document: the documents' texts, where a prompt is looked for, are read back from the
database when needed. The run's secrets reach it in the pipe, to scrub with (never in its
arguments).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import pickle
import signal
import sqlite3
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from rlm_desktop.engine.events import Event, RunFinished
from rlm_desktop.store.redact import Redactor
from rlm_desktop.store.texts import session_texts
from rlm_desktop.store.writer import SessionWriter, WriterState
from rlm_desktop.store.writing_connection import immediate_transaction, writing_connection

log = logging.getLogger(__name__)

START_WAIT_S = 5.0
"""How long a session waits for the process to come up (a fresh interpreter and the store's
imports: ~0.3 s here) before its thread writes it to its end instead."""
STOP_WAIT_S = 10.0
"""How long closing waits for the process to finish its last message before killing it."""


class WritingStopped(sqlite3.OperationalError):
    """The writing process is gone: what it had not written cannot be written by it."""


class WriterFailed(Exception):
    """An error the writing process met that is not the database's (a bug): its type and text."""


def serve(channel: Connection, path: str) -> None:
    """The process's side: write what the app sends on `channel`, answer each message."""
    with contextlib.suppress(ValueError, OSError):  # no SIGINT to ignore where there is none
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    connection = writing_connection(Path(path))
    writers: dict[str, SessionWriter] = {}
    channel.send(("ready", os.getpid()))
    while True:
        try:
            kind, session_id, payload = pickle.loads(channel.recv_bytes())
        except (EOFError, OSError):
            break
        started = time.process_time()
        try:
            if kind == "resume":
                state, redactor = payload
                writers[session_id] = SessionWriter.resumed(connection, session_id, redactor, state)
            elif kind == "documents":
                writers[session_id].documents_stored(session_texts(connection, session_id, payload))
            elif kind == "write":
                with immediate_transaction(connection):
                    writers[session_id].write(payload)
                if any(isinstance(event, RunFinished) for event in payload):
                    del writers[session_id]  # its last event: nothing more comes
            answer: tuple[Any, ...] = ("ok", time.process_time() - started)
        except Exception as error:
            answer = ("error", time.process_time() - started, *_described(error))
        channel.send(answer)
    connection.close()


def _described(error: Exception) -> tuple[str, str, int | None, str | None]:
    return (
        type(error).__name__,
        str(error),
        getattr(error, "sqlite_errorcode", None),
        getattr(error, "sqlite_errorname", None),
    )


def _rebuilt(name: str, text: str, code: int | None, code_name: str | None) -> Exception:
    """The error the process met, as the app would have met it writing itself."""
    kind = getattr(sqlite3, name, None)
    if isinstance(kind, type) and issubclass(kind, sqlite3.Error):
        error = kind(text)
        if code is not None:
            error.sqlite_errorcode = code
        if code_name is not None:
            error.sqlite_errorname = code_name
        return error
    return WriterFailed(f"{name}: {text}")


class EventsProcess:
    """The app's side of one store's writing process (used by the store's writing thread only)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._process: BaseProcess | None = None
        self._channel: Connection | None = None
        self._ready = False
        self.unavailable = False
        """True once the process could not be started: sessions are written by the thread."""
        self.cpu_seconds = 0.0
        """The CPU the process has used on the messages it answered."""

    @property
    def pid(self) -> int | None:
        """The process's id while it runs."""
        return self._process.pid if self._process is not None and self._ready else None

    def ready(self, wait: float = START_WAIT_S) -> bool:
        """Whether the process is up to take a session, starting it when it is not running and
        waiting up to `wait` seconds for it."""
        if self._ready or self.unavailable:
            return self._ready
        if self._channel is None:
            self._start()
        if self._channel is None:
            return False
        try:
            if not self._channel.poll(wait):
                return False
            self._channel.recv()
        except (EOFError, OSError):
            self._gave_up("it stopped as it started")
            return False
        self._ready = True
        return True

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        try:
            ours, theirs = context.Pipe()
            process = context.Process(
                target=serve, args=(theirs, str(self._path)), name="rlm-store-writer", daemon=True
            )
            process.start()
        except Exception as error:
            self._gave_up(f"{type(error).__name__}: {error}")
            return
        theirs.close()
        self._process, self._channel = process, ours

    def _gave_up(self, why: str) -> None:
        log.warning("cannot start the store's writing process (%s); the thread writes", why)
        self.unavailable = True
        self.close()

    def resume(self, session_id: str, state: WriterState, redactor: Redactor) -> None:
        """Go on writing `session_id` from `state` (what its writer knew)."""
        self._ask("resume", session_id, (state, redactor))

    def documents_stored(self, session_id: str, count: int) -> None:
        """The first `count` of the session's documents are stored (look for prompts in them)."""
        self._ask("documents", session_id, count)

    def write(self, session_id: str, events: Sequence[Event]) -> None:
        """Write `events` in one transaction; raises what writing them raised."""
        self._ask("write", session_id, list(events))

    def _ask(self, kind: str, session_id: str, payload: object) -> None:
        channel = self._channel
        if channel is None or not self._ready:
            raise WritingStopped("the store's writing process is not running")
        try:
            channel.send_bytes(pickle.dumps((kind, session_id, payload), pickle.HIGHEST_PROTOCOL))
            answer = channel.recv()
        except (EOFError, OSError) as error:
            raise WritingStopped(self._stopped()) from error
        self.cpu_seconds += answer[1]
        if answer[0] == "error":
            raise _rebuilt(*answer[2:])

    def _stopped(self) -> str:
        process = self._process
        self.close()
        if process is not None:
            process.join(1)
        code = process.exitcode if process is not None else None
        how = f"exit code {code}" if code is None or code >= 0 else f"signal {-code}"
        return f"the store's writing process stopped ({how})"

    def close(self) -> None:
        """End the process: it finishes the message it is on, then sees the pipe closed."""
        process, channel = self._process, self._channel
        self._process = self._channel = None
        self._ready = False
        if channel is not None:
            channel.close()
        if process is not None:
            process.join(STOP_WAIT_S)
            if process.exitcode is None:
                process.kill()
                process.join(STOP_WAIT_S)
