"""Saved sessions in the window as a reviewer opens them: waiting for a session's health check,
which runs beside the window's event loop (`HealthPanel.check_session`), and a session whose
model code sent megabytes that quote nothing, with a probe of the loop while it is checked."""

from __future__ import annotations

import gc
import itertools
import time

from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from rlm_desktop.review.health import HealthReport
from rlm_desktop.ui.window.main_window import MainWindow
from tests.review.attack_session import Shape, corpus, record

FILLED = Shape(slices=10, slice_chars=200_000, distinct=12, distinct_chars=1_000_000)
"""A 2 MB corpus read whole, and 12 MB of texts that quote nothing: seconds of checking."""
TICK_MS = 20
MOST_STOPPED_S = 1.0


def open_checked(window: MainWindow, qtbot: QtBot, session_id: str) -> HealthReport:
    """Open `session_id` in `window`; its health report, once shown."""
    assert window.open_session(session_id)
    panel = window.workspace.health
    qtbot.waitUntil(lambda: panel.report is not None, timeout=60_000)
    assert panel.report is not None
    return panel.report


def record_filled(window: MainWindow, session_id: str = "filled") -> str:
    """Record the `FILLED` session in the window's own store; its id."""
    record(window.starter.store(), session_id, corpus(2_000_000), FILLED)
    return session_id


class LoopTicks:
    """Notes each time a 20 ms timer of the window's loop fires, from now to `stop`: made once
    a session is open, it watches the loop while the session's health is checked."""

    def __init__(self) -> None:
        # What the test process holds already (a whole suite's leftovers, in a full run) is left
        # out of the garbage collector's passes while the loop is watched: a full pass over it
        # stops every thread for as long as it takes, whatever the window does.
        gc.collect()
        gc.freeze()
        self.started = time.monotonic()
        self._ticks: list[float] = []
        self._timer = QTimer()
        self._timer.timeout.connect(lambda: self._ticks.append(time.monotonic()))
        self._timer.start(TICK_MS)

    def stop(self) -> None:
        """Stop noting; then check the loop with `assert_kept_turning`."""
        self._timer.stop()
        self.elapsed = time.monotonic() - self.started
        gc.unfreeze()

    def assert_kept_turning(self) -> None:
        """The loop turned all along: often, and never stopped for a second (the window froze
        for the whole check when it ran on the loop; the benchmark holds the tight figure)."""
        gaps = [later - earlier for earlier, later in itertools.pairwise(self._ticks)]
        assert len(gaps) > 10, f"the loop turned {len(gaps)} times in {self.elapsed:.1f} s"
        assert max(gaps) < MOST_STOPPED_S, (max(gaps), self.elapsed)
