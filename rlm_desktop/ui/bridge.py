"""The one bridge from engine events to Qt: buffer, then deliver in batches on a timer.

A run with hundreds of concurrent sub-calls publishes thousands of events a second; repainting for
each would freeze the window. The bridge appends events to a buffer (safe from any thread) and a
Qt timer hands the whole buffer to the GUI every `interval_ms`, so item models insert rows and
emit `dataChanged` once per batch. A saved session is replayed by `feed`ing its events here too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from PySide6.QtCore import QObject, QTimer, Signal

from rlm_desktop.engine.events import Event

DEFAULT_INTERVAL_MS = 40


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
        self._timer.timeout.connect(self.flush)
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
        if events:
            self.delivered += len(events)
            self.batch.emit(events)

    def pending(self) -> int:
        """How many events wait for the next batch."""
        with self._lock:
            return len(self._buffer)
