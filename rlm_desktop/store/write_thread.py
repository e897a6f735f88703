"""The store's writing thread: every recorder's writes, on a connection of its own.

A run's event loop only appends its events to its recorder's buffer; this thread writes them (and
the run's documents, `documents_beside.py`) in transactions on its own SQLite connection, so the
loop, and a window drawn on it, never waits for the disk. A big run's events are written by the
store's writing process instead (`events_process.py`), which this thread sends them to. SQLite
lets one connection write at a time, so one thread serves every run of a store; readers (the
window, `sessions show`) read what it has committed (the database is in WAL mode).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from rlm_desktop.store.events_process import EventsProcess
from rlm_desktop.store.writing_connection import writing_connection

log = logging.getLogger(__name__)


class Client(Protocol):
    """What the thread asks of a recorder (under `WriteThread.condition`), and has it do."""

    def ready_in(self, now: float) -> float | None:
        """Seconds until it has something to write (0: now), None when it has nothing."""
        ...

    def work(self, connection: sqlite3.Connection) -> None:
        """Write one piece (called without the condition held)."""
        ...


class WriteThread:
    """One thread and one connection that write for every recorder of a store (started with
    the first recorder, stopped by `close`)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self.condition = threading.Condition()
        """Guards every client's buffer; notified when there is work or a piece was written."""
        self._clients: list[Client] = []
        self._thread: threading.Thread | None = None
        self._connection: sqlite3.Connection | None = None
        self._closing = False
        self.process = EventsProcess(path)
        """The process a big run's events move to (`events_process.py`), started on first need."""

    @property
    def connection(self) -> sqlite3.Connection:
        """The thread's own connection to the database (opened on first use)."""
        if self._connection is None:
            self._connection = writing_connection(self._path)
        return self._connection

    def add(self, client: Client) -> None:
        """Serve `client` from now on (starts the thread with the first)."""
        with self.condition:
            self._clients.append(client)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="rlm-desktop store writer", daemon=True
                )
                self._thread.start()

    def remove(self, client: Client) -> None:
        """Serve `client` no more."""
        with self.condition:
            if client in self._clients:
                self._clients.remove(client)

    def wait_for(self, done: Callable[[], bool]) -> None:
        """Wait (the condition held) until `done()` says so; the thread notifies after each piece."""
        with self.condition:
            self.condition.notify_all()
            while not done():
                self.condition.wait(0.5)

    def _serve(self) -> None:
        while True:
            with self.condition:
                client = self._next_client()
                if client is None:
                    return
            try:
                client.work(self.connection)
            except Exception:  # a recorder's own errors are its to hold; this is a bug
                log.exception("the store's writing thread: a piece of work failed")
            with self.condition:
                self.condition.notify_all()

    def _next_client(self) -> Client | None:
        """The first client with something to write now, waiting for one (condition held);
        None once closing with nothing left."""
        while True:
            now = time.monotonic()
            waits = [(client.ready_in(now), client) for client in self._clients]
            ready = [client for wait, client in waits if wait is not None and wait <= 0]
            if ready:
                self._clients.remove(ready[0])  # the others go first next time
                self._clients.append(ready[0])
                return ready[0]
            if self._closing and not self._clients:
                return None
            timeouts = [wait for wait, _ in waits if wait is not None]
            self.condition.wait(min(timeouts, default=1.0))

    def close(self) -> None:
        """Stop the thread once its clients are gone, and close its connection."""
        with self.condition:
            self._closing = True
            self.condition.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
        self.process.close()
        if self._connection is not None:
            self._connection.close()
            self._connection = None
