"""The one bridge from engine events to Qt: buffer, then deliver in batches on a timer.

A run with hundreds of concurrent sub-calls publishes thousands of events a second; repainting for
each would freeze the window. The bridge appends events to a buffer (safe from any thread) and a
Qt timer hands the buffer to the GUI every `interval_ms`, so item models insert rows and emit
`dataChanged` once per batch. A batch holds at most `MAX_BATCH` events; the rest follow at the
loop's next turn, so a fan-out that starts a thousand calls at once does not hold the window in
one long step. A saved session is replayed by `feed`ing its events here too (all at once).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from PySide6.QtCore import QObject, QTimer, Signal

from rlm_desktop.engine.events import Event

DEFAULT_INTERVAL_MS = 40
MAX_BATCH = 250


class EventBridge(QObject):
    """Coalesces events and emits `batch(list[Event])` at most once per interval."""

    batch = Signal(list)

    def __init__(
        self, parent: QObject | None = None, interval_ms: int = DEFAULT_INTERVAL_MS
    ) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._buffer: list[Event] = []
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._deliver_some)
        self._rest = QTimer(self)
        self._rest.setInterval(0)
        self._rest.setSingleShot(True)
        self._rest.timeout.connect(self._deliver_some)
        self._pending = False
        self.delivered = 0

    def push(self, event: Event) -> None:
        """Queue one event (an `EventBus` listener); safe to call from any thread."""
        with self._lock:
            self._buffer.append(event)
            if self._pending:
                return
            self._pending = True
        if threading.current_thread() is threading.main_thread():
            self._timer.start()
        else:
            QTimer.singleShot(0, self, self._timer.start)

    def feed(self, events: Iterable[Event]) -> None:
        """Deliver `events` now, after anything already queued (used to replay a saved run)."""
        with self._lock:
            self._buffer.extend(events)
        self.flush()

    def flush(self) -> None:
        """Deliver whatever is buffered as one batch."""
        with self._lock:
            events, self._buffer = self._buffer, []
            self._pending = False
        self._timer.stop()
        self._rest.stop()
        self._deliver(events)

    def _deliver_some(self) -> None:
        with self._lock:
            events = self._buffer[:MAX_BATCH]
            del self._buffer[:MAX_BATCH]
            more = self._pending = bool(self._buffer)
        if more:
            self._rest.start()
        self._deliver(events)

    def _deliver(self, events: list[Event]) -> None:
        if events:
            self.delivered += len(events)
            self.batch.emit(events)

    def pending(self) -> int:
        """How many events wait for the next batch."""
        with self._lock:
            return len(self._buffer)
