"""A load in progress, in view: files found, loaded and skipped, a bar once the total is known,
and Cancel. `LoadWatch` carries the counts from the loader thread to the window, a few times a
second at most, and carries a cancel the other way."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QVBoxLayout, QWidget

from rlm_desktop.documents.load_progress import LoadCancelled, LoadProgress
from rlm_desktop.ui.shared.widgets import plain_label, tool_button

REPORT_INTERVAL_S = 0.1
"""The least time between two reports crossing to the window (the last one always crosses)."""
BAR_STEPS = 1000


class LoadWatch:
    """Given to the loader as its `on_progress` (it runs in the loader thread): passes the
    counts on to `report` on `loop`'s thread, throttled, and stops the load once cancelled."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, report: Callable[[LoadProgress], None]
    ) -> None:
        self._loop = loop
        self._report = report
        self._cancelled = threading.Event()
        self._last = 0.0

    @property
    def cancelled(self) -> bool:
        """True once `cancel` was called."""
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop the load at its next entry (any thread)."""
        self._cancelled.set()

    def __call__(self, progress: LoadProgress) -> None:
        if self._cancelled.is_set():
            raise LoadCancelled
        now = time.monotonic()
        finished = not progress.listing and progress.read == progress.found
        if now - self._last < REPORT_INTERVAL_S and not finished:
            return
        self._last = now
        try:
            self._loop.call_soon_threadsafe(self._delivered, progress)
        except RuntimeError:  # the window's loop is closed: nobody is waiting for this load
            raise LoadCancelled from None

    def _delivered(self, progress: LoadProgress) -> None:
        if not self._cancelled.is_set():
            self._report(progress)


class LoadingBar(QWidget):
    """`Loading… 1,204 found · 870 loaded · 12 skipped`, a progress bar, and Cancel."""

    def __init__(self, cancel: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = plain_label()
        self.label.setObjectName("muted")
        self.label.setWordWrap(True)
        self.label.setAccessibleName("Loading progress")
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(8)
        self.bar.setAccessibleName("Documents loaded")
        self.cancel_button = tool_button("Cancel", "Stop loading; the list stays as it was", cancel)
        self.cancel_button.setAccessibleName("Cancel loading")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.label)
        layout.addLayout(row)
        self.hide()

    def start(self, items: int) -> None:
        """Show a load of `items` named paths starting (nothing counted yet)."""
        if not self.isVisible():
            self.label.setText(f"Loading {items:,} item{'s' if items != 1 else ''}…")
            self.bar.setRange(0, 0)  # busy until the total is known
        self.show()

    def show_progress(self, progress: LoadProgress) -> None:
        """Show the counts so far, and the share read once the folders are listed."""
        self.label.setText(f"Loading… {progress.describe()}")
        fraction = progress.fraction
        if fraction is None:
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, BAR_STEPS)
            self.bar.setValue(round(fraction * BAR_STEPS))
