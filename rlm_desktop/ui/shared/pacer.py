"""At most one run of a piece of display work per interval, the last request never lost.

A live run changes the same things many times a second; some views cost more to bring up to date
than the eye gains from seeing every step (a rich-text label relays out its window, a tree view
relays out all its rows on each insertion). A `Pacer` runs its work at once when it has been idle
for an interval, and otherwise once at the end of the interval for all the requests made in it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


class Pacer(QObject):
    """Calls `work` on `request()`, at most once per `interval_ms`; `flush()` runs what waits."""

    def __init__(
        self, work: Callable[[], object], interval_ms: int, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._work = work
        self._waiting = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timeout)

    @property
    def waiting(self) -> bool:
        """True while a request waits for the end of the interval."""
        return self._waiting

    def request(self) -> None:
        """Run the work now if the last run is an interval ago, else at the end of the interval."""
        if self._timer.isActive():
            self._waiting = True
            return
        self._run()

    def flush(self) -> None:
        """Run a waiting request now (the view must be complete, e.g. the run has ended)."""
        if self._waiting:
            self._run()

    def cancel(self) -> None:
        """Forget a waiting request (what it would have shown is gone)."""
        self._waiting = False
        self._timer.stop()

    def _run(self) -> None:
        self._waiting = False
        self._timer.start()
        self._work()

    def _on_timeout(self) -> None:
        if self._waiting:
            self._run()
