"""Records a live run: a cheap bus listener that buffers events and writes them in batches.

The listener only appends to a list. A flush (one transaction) happens on a short timer of the
running asyncio loop, at every turn boundary and at the end of a root call, at `RunFinished`,
and whenever the buffer is older than `MAX_DELAY_S` — so a killed process loses at most a
fraction of a second of its run.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from rlm_desktop.engine.events import CallFinished, CallStarted, Event, RunFinished, TurnExecuted
from rlm_desktop.store.redact import Redactor
from rlm_desktop.store.writer import Opening, SessionWriter

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.1
MAX_DELAY_S = 0.2
MAX_BUFFER = 500  # one transaction of ~500 events keeps a GUI loop stall near 20 ms
RETRY_AFTER_S = 1.0


class RecordingSink(Protocol):
    """What a recorder needs from the store: a transaction to write in, and two notices."""

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """Hold the database for one atomic batch of writes."""
        ...

    def mark_interrupted(self, session_id: str) -> None:
        """End a session that stopped without `RunFinished`."""
        ...

    def recorder_closed(self, recorder: Recorder) -> None:
        """The recorder has written its last event."""
        ...


class Recorder:
    """Writes one run's events to the store as they happen. Made by `Store.record`.

    `events_written`, `flushes` and `write_seconds` say what recording has cost so far.
    """

    def __init__(
        self,
        sink: RecordingSink,
        opening: Opening,
        redactor: Redactor,
        attach: Callable[[Callable[[Event], None]], Callable[[], None]],
    ) -> None:
        self.session_id: str = opening.session["id"]
        self._sink = sink
        self._opening: Opening | None = opening
        self._redactor = redactor
        self._writer: SessionWriter | None = None
        self._buffer: list[Event] = []
        self._roots: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._oldest = 0.0
        self._retry_at = 0.0
        self.finished = False
        self.events_written = 0
        self.flushes = 0
        self.write_seconds = 0.0
        self._detach: Callable[[], None] | None = attach(self._on_event)

    def _on_event(self, event: Event) -> None:
        if not self._buffer:
            self._oldest = time.monotonic()
        self._buffer.append(event)
        if isinstance(event, CallStarted) and event.parent_id is None:
            self._roots.add(event.call_id)
        boundary = isinstance(event, RunFinished) or (
            isinstance(event, TurnExecuted | CallFinished) and event.call_id in self._roots
        )
        now = time.monotonic()
        if now >= self._retry_at and (
            boundary or len(self._buffer) >= MAX_BUFFER or now - self._oldest >= MAX_DELAY_S
        ):
            self.flush()
        elif self._timer is None:
            self._schedule()
        if isinstance(event, RunFinished):
            self.finished = True
            self._stop_listening()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(FLUSH_INTERVAL_S, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.flush()

    def flush(self) -> None:
        """Write every buffered event now, in one transaction."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._buffer:
            return
        batch, self._buffer = self._buffer, []
        started = time.perf_counter()
        try:
            with self._sink.transaction() as connection:
                if self._writer is None:
                    self._writer = SessionWriter(connection, self.session_id, self._redactor)
                if self._opening is not None:
                    self._writer.open(self._opening)
                self._writer.write(batch)
            self._opening = None
            self.events_written += len(batch)
            self.flushes += 1
        except sqlite3.Error:
            log.exception("could not write %d events of session %s", len(batch), self.session_id)
            self._buffer = batch + self._buffer
            self._retry_at = time.monotonic() + RETRY_AFTER_S
        finally:
            self.write_seconds += time.perf_counter() - started

    def _stop_listening(self) -> None:
        if self._detach is not None:
            self._detach()
            self._detach = None

    def close(self) -> None:
        """Flush and stop listening; a run that never finished is marked `interrupted`."""
        self._stop_listening()
        self.flush()
        if not self.finished and self._opening is None:
            self._sink.mark_interrupted(self.session_id)
            self.finished = True
        self._sink.recorder_closed(self)
