"""The window outlives an error nothing caught: in a slot, a paint, or an asyncio task.

PySide6 hands such an exception to `sys.excepthook` and goes on; qasync hands a task's to the
loop's exception handler. `CrashGuard` takes both: it writes the error with its traceback to
`paths.crash_log_path()` (scrubbed of every key the process holds), and tells the user once per
place it came from, after the event that raised has ended (a paint that fails on every frame
would otherwise open a dialog a frame). The window, the run and what is saved carry on.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import traceback
from collections.abc import Callable
from logging.handlers import RotatingFileHandler
from types import TracebackType
from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QMessageBox, QWidget

from rlm_desktop import paths
from rlm_desktop.providers.keys import keys_in_memory
from rlm_desktop.redact import Redactor

log = logging.getLogger("rlm_desktop.uncaught")
LOG_BYTES = 1024 * 1024
LOG_BACKUPS = 2


class CrashGuard(QObject):
    """Installs itself as `sys.excepthook` and as `loop`'s exception handler (`install`); the
    errors it saw are in `seen`, each place with how many times it raised."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self.seen: dict[str, int] = {}
        self.shown: list[QMessageBox] = []
        self._previous_hook: Callable[..., Any] | None = None
        self._handler: logging.Handler | None = None

    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Take the errors nothing caught from now on (undone by `uninstall`)."""
        self._previous_hook = sys.excepthook
        sys.excepthook = self.on_exception
        if loop is not None:
            loop.set_exception_handler(self._on_loop_error)
        try:
            handler = RotatingFileHandler(
                paths.crash_log_path(), maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS,
                encoding="utf-8", delay=True,
            )  # fmt: skip
        except OSError:
            return  # nowhere to write: the dialog still says what happened
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        log.addHandler(handler)
        log.propagate = False
        self._handler = handler

    def uninstall(self) -> None:
        """Give `sys.excepthook` back and close the log."""
        if self._previous_hook is not None:
            sys.excepthook = self._previous_hook
        if self._handler is not None:
            log.removeHandler(self._handler)
            self._handler.close()
            self._handler = None

    def on_exception(
        self, kind: type[BaseException], error: BaseException, trace: TracebackType | None
    ) -> None:
        """What `sys.excepthook` is: record the error, and say so once per place."""
        if issubclass(kind, KeyboardInterrupt | SystemExit):
            if self._previous_hook is not None:
                self._previous_hook(kind, error, trace)
            return
        redactor = Redactor.for_run(None, keys_in_memory())
        text = redactor.text("".join(traceback.format_exception(kind, error, trace)))
        place = _place(trace)
        count = self.seen[place] = self.seen.get(place, 0) + 1
        log.error("uncaught error (%d at %s):\n%s", count, place, text)
        print(text, file=sys.stderr, end="")
        if count == 1:
            summary = redactor.text(f"{kind.__name__}: {error}")
            QTimer.singleShot(0, lambda: self._tell(summary, place, text))

    def _on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if isinstance(error, BaseException):
            self.on_exception(type(error), error, error.__traceback__)
        else:
            loop.default_exception_handler(context)

    def _tell(self, summary: str, place: str, text: str) -> None:
        box = QMessageBox(self._window)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Something went wrong")
        box.setText("RLM Desktop hit an error it did not expect. The window stays open and "
                    "what is saved is kept; what you were doing may not have finished.")  # fmt: skip
        where = f"It was written to {paths.crash_log_path()}" if self._handler else ""
        box.setInformativeText(f"{summary}\n(in {place})\n\n{where}".strip())
        box.setDetailedText(text)
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.finished.connect(lambda _result: self.shown.remove(box))
        self.shown.append(box)
        box.open()


def _place(trace: TracebackType | None) -> str:
    """Where an error was raised: the innermost frame's file name, line and function."""
    frames = traceback.extract_tb(trace) if trace is not None else []
    if not frames:
        return "an unknown place"
    last = frames[-1]
    return f"{last.filename.rsplit('/', 1)[-1]}:{last.lineno}, {last.name}"
