"""Getting the WebAssembly sandbox ready in the background: when runs would use it here (chosen
in Settings → Sandbox, or `auto` on a system without a kernel sandbox) and its guest is not yet
compiled for this machine, the window compiles it once (seconds) in a thread of its own and says
so in the status bar. Nothing waits for it: a run started meanwhile compiles it too (its host
does), only slower."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QSizePolicy, QStatusBar

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.engine.sandbox.choice import backend_for
from rlm_desktop.ui.appearance.theme import repolish
from rlm_desktop.ui.shared.daemon_thread import in_daemon_thread
from rlm_desktop.ui.shared.widgets import ElidedLabel

log = logging.getLogger(__name__)
PREPARING = "Preparing the WebAssembly sandbox for this machine (once)…"
READY_SHOWN_MS = 15_000
"""How long the status bar says the sandbox is ready (a failure stays until a run starts)."""
REASON_CHARS = 160
LEAST_WIDTH = 160
"""The status bar line's least width in pixels; past it the line ends in "…" (whole in its
tooltip)."""


def ready_text(seconds: float) -> str:
    """What the status bar says once the guest is compiled."""
    return f"WebAssembly sandbox ready for this machine (compiled in {seconds:.0f} s)."


def failed_text(reason: str) -> str:
    """What the status bar says when the guest could not be compiled (a run compiles it again)."""
    return (
        f"The WebAssembly sandbox could not be prepared ({fmt.one_line(reason, REASON_CHARS)}); "
        "runs in it prepare it as they start."
    )


class WasmPreparation(QObject):
    """Compiles the WebAssembly sandbox's guest for this machine when runs would need it;
    `label` sits in the status bar while there is something to say."""

    def __init__(self, status: QStatusBar, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.label = ElidedLabel()
        self.label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.label.setMinimumWidth(LEAST_WIDTH)  # never the window's least width: it elides
        self.label.setObjectName("statusField")
        self.label.setAccessibleName("WebAssembly sandbox")
        self.label.hide()
        status.insertPermanentWidget(0, self.label)
        self.failure: str | None = None
        """Why the last compile failed, until a run starts (it compiles again)."""
        self._task: asyncio.Task[None] | None = None
        self._hide = QTimer(self)
        self._hide.setSingleShot(True)
        self._hide.timeout.connect(self.label.hide)

    @property
    def busy(self) -> bool:
        """True while it checks or compiles."""
        return self._task is not None and not self._task.done()

    @property
    def compiling(self) -> bool:
        """True while it compiles (the guest was not compiled for this machine)."""
        return self.busy and self.label.text() == PREPARING

    def start_if_needed(self, choice: str) -> bool:
        """Begin when runs under `choice` take the wasm sandbox here; True when it is under
        way (the look whether the guest is compiled already is part of the work)."""
        if self.busy:
            return True
        try:
            if backend_for(choice) != "wasm":
                return False
        except ConfigError:
            return False
        self._task = asyncio.ensure_future(self._prepare(paths.compiled_root()))
        return True

    async def wait(self) -> None:
        """Until the work under way (if any) has ended."""
        if self._task is not None:
            await asyncio.gather(asyncio.shield(self._task), return_exceptions=True)

    def step_aside(self) -> None:
        """A run is starting: its own lines take the status bar. The line that the sandbox is
        ready, or could not be prepared, goes (such a run compiles it again, and says how); the
        line that it is being prepared stays while it is."""
        if not self.busy:
            self.failure = None
            self._hide.stop()
            self.label.hide()

    async def _prepare(self, folder: Path) -> None:
        """Off the GUI thread: the guest's digest (20 MB read) and wasmtime's import too."""
        from rlm_desktop.engine.sandbox.wasm.prepare import is_prepared, prepare

        if await in_daemon_thread(lambda: is_prepared(folder), "rlm-wasm-check"):
            return
        self.failure = None
        self._say(PREPARING)
        try:
            seconds = await in_daemon_thread(lambda: prepare(folder), "rlm-wasm-prepare")
        except Exception as error:  # the guest is missing, the runtime refused it, ...
            log.warning("the WebAssembly sandbox could not be prepared: %s", error)
            self.failure = f"{type(error).__name__}: {error}"
            self._say(failed_text(self.failure))
            return
        self._say(ready_text(seconds))
        self._hide.start(READY_SHOWN_MS)

    def _say(self, text: str) -> None:
        self._hide.stop()
        self.label.setText(text)
        self.label.setProperty("warning", self.failure is not None)
        repolish(self.label)
        self.label.show()
