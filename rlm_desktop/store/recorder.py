"""Records a live run: a cheap bus listener that buffers events and writes them in batches.

The listener only appends to a list. Writing waits for the loop to go quiet: a short timer of the
running asyncio loop writes once no event has come for `QUIET_S` (a fan-out's requests go out
first, and are recorded while their replies are awaited), in transactions of at most `MAX_BUFFER`
events, one per turn of the loop, so a window stays responsive. Writing starts at once, busy or
not, at every turn boundary of a root call, at its end, at `RunFinished`, and when the buffer holds
`MAX_DEFERRED` events or is older than `MAX_DELAY_S` — so a killed process loses at most a fraction
of a second of its run. `close` writes what is left.
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

FLUSH_INTERVAL_S = 0.05
QUIET_S = 0.004
MAX_DELAY_S = 0.25
MAX_BUFFER = 150  # at ~20 µs an event, one transaction stays well under a 16 ms frame of a GUI loop
MAX_DEFERRED = 4 * MAX_BUFFER  # what `close` may have left to write at once
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

    def describe(self, error: BaseException) -> str:
        """What `error` means for the database, and what to do about it, in one line."""
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
        self._draining: asyncio.Handle | None = None
        self._oldest = 0.0
        self._latest = 0.0
        self._retry_at = 0.0
        self._refused: sqlite3.Error | None = None
        self._left_out: list[str] = []
        self.finished = False
        self.events_written = 0
        self.flushes = 0
        self.write_seconds = 0.0
        self._detach: Callable[[], None] | None = attach(self._on_event)

    def _on_event(self, event: Event) -> None:
        if not event.stored:
            return
        now = time.monotonic()
        if not self._buffer:
            self._oldest = now
        self._latest = now
        self._buffer.append(event)
        if isinstance(event, CallStarted) and event.parent_id is None:
            self._roots.add(event.call_id)
        boundary = isinstance(event, RunFinished) or (
            isinstance(event, TurnExecuted | CallFinished) and event.call_id in self._roots
        )
        due = (
            boundary or len(self._buffer) >= MAX_DEFERRED or now - self._oldest >= MAX_DELAY_S
        )
        if self._draining is not None:
            pass  # the buffer is being written a piece per loop turn already
        elif due and now >= self._retry_at:
            self._drain()
        elif self._timer is None:
            self._schedule(FLUSH_INTERVAL_S)
        if isinstance(event, RunFinished):
            self.finished = True
            self._stop_listening()

    def _schedule(self, delay_s: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(delay_s, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        now = time.monotonic()
        if now - self._latest < QUIET_S and now - self._oldest < MAX_DELAY_S:
            self._schedule(QUIET_S)  # events are still pouring in: write once they pause
        else:
            self._drain()

    def _drain(self) -> None:
        """Write the oldest `MAX_BUFFER` events, and the rest on the loop's next turns."""
        self._draining = None
        self._write_out(MAX_BUFFER)
        if self._buffer and time.monotonic() >= self._retry_at:
            try:
                self._draining = asyncio.get_running_loop().call_soon(self._drain)
            except RuntimeError:
                self._write_out(None)
        elif self._buffer and self._timer is None:  # the database refused: try again later
            self._schedule(max(FLUSH_INTERVAL_S, self._retry_at - time.monotonic()))

    def flush(self) -> None:
        """Write every buffered event now, in one transaction.

        If the database refuses (disk full, read-only, locked), the events stay buffered and are
        tried again after `RETRY_AFTER_S`; an event the writer cannot take at all is left out,
        the rest written around it. Either way `warnings` says so once the run is closed.
        """
        self._write_out(None)

    def _write_out(self, limit: int | None) -> None:
        """Write the oldest `limit` buffered events (all of them for None) in one transaction."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._draining is not None and limit is None:
            self._draining.cancel()
            self._draining = None
        if not self._buffer:
            return
        if limit is None or limit >= len(self._buffer):
            batch, self._buffer = self._buffer, []
        else:
            batch, self._buffer = self._buffer[:limit], self._buffer[limit:]
        started = time.perf_counter()
        try:
            self._write(batch)
        except sqlite3.IntegrityError:  # an event the tables refuse (no parent row): not retried
            log.info("session %s: writing event by event", self.session_id, exc_info=True)
            self._write_singly(batch)
        except sqlite3.Error as error:
            self._hold(batch, error)
        except Exception:
            log.info("session %s: writing event by event", self.session_id, exc_info=True)
            self._write_singly(batch)
        finally:
            self.write_seconds += time.perf_counter() - started

    def _write(self, batch: list[Event]) -> None:
        with self._sink.transaction() as connection:
            if self._writer is None:
                self._writer = SessionWriter(connection, self.session_id, self._redactor)
            if self._opening is not None:
                self._writer.open(self._opening)
            self._writer.write(batch)
        self._opening = None
        self._refused = None
        self.events_written += len(batch)
        self.flushes += 1

    def _hold(self, batch: list[Event], error: sqlite3.Error) -> None:
        """Keep `batch` for the next try: the database refused it, not the events."""
        log.info("session %s: %d events wait: %s", self.session_id, len(batch), error)
        self._buffer = batch + self._buffer
        self._refused = error
        self._retry_at = time.monotonic() + RETRY_AFTER_S

    def _write_singly(self, batch: list[Event]) -> None:
        for position, event in enumerate(batch):
            try:
                self._write([event])
            except sqlite3.Error as error:
                if not isinstance(error, sqlite3.IntegrityError):
                    self._hold(batch[position:], error)
                    return
                self._left_out.append(f"{type(event).__name__} ({error})")
            except Exception as error:
                log.info("session %s: cannot store %s", self.session_id, event, exc_info=True)
                self._left_out.append(f"{type(event).__name__} ({type(error).__name__}: {error})")

    @property
    def warnings(self) -> list[str]:
        """What of the run could not be saved, one line each (empty when all of it was)."""
        found = []
        if self._left_out:
            found.append(
                f"session {self.session_id}: {len(self._left_out)} events could not be stored"
                f" and were left out: {', '.join(self._left_out[:3])}"
            )
        if self._buffer and self._refused is not None:
            how = "not saved" if self._opening is not None else "not saved in full"
            found.append(
                f"session {self.session_id} was {how}: {len(self._buffer)} events could not be"
                f" written: {self._sink.describe(self._refused)}"
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
        if (self._buffer or not self.finished) and self._opening is None:
            try:
                self._sink.mark_interrupted(self.session_id)
            except sqlite3.Error as error:
                log.info("session %s: not marked interrupted: %s", self.session_id, error)
            self.finished = True
        self._sink.recorder_closed(self)
