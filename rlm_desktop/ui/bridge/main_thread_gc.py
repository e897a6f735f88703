"""Python's cyclic garbage collector, run only on Qt's thread.

The collector runs in whichever thread happens to allocate when a generation fills up: a document
loader, a trace sender, litellm's HTTP threads. A reference cycle holding a Qt object (a closed
dialog, a slot closure over a widget) freed there deletes a QObject outside the thread that owns
it, while its timers are still registered with the GUI thread's event dispatcher: Qt then fires a
timer into freed memory and the process crashes, long after and far from the cause. pyqtgraph
ships the same guard for the same reason. Automatic collection is turned off and a timer on the
GUI thread collects each generation as its threshold is reached.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 100
"""Often enough that each young collection stays small: with 1 s between them, a busy run's
allocations made one collection of the youngest generations pause the window for tens of ms."""
FULL_EVERY_S = 30.0
"""The oldest generation at most this often: a full collection of a large heap takes a long time,
and Python's own rule for it (only once a quarter of the long-lived objects are new) is not
reachable from Python code."""


class MainThreadGarbageCollector(QObject):
    """Once started, cycles are only ever collected on the thread this object lives in."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        self._last_full = time.monotonic()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect)

    def start(self) -> None:
        """Turn automatic collection off and collect from the timer instead."""
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Give collection back to Python."""
        self._timer.stop()
        gc.enable()

    def collect(self) -> None:
        """Collect the oldest generation whose count has passed its threshold, as Python would,
        the oldest one no more often than every `FULL_EVERY_S`."""
        counts = gc.get_count()
        now = time.monotonic()
        full_due = now - self._last_full >= FULL_EVERY_S
        for generation in (2, 1, 0):
            if counts[generation] <= self._thresholds[generation]:
                continue
            if generation == 2:
                if not full_due:
                    continue
                self._last_full = now
            gc.collect(generation)
            return
