"""Opening a trajectory file as a read-only session: File → Open trajectory…, a file dropped on
the window, and the welcome page's recorded run.

The file is imported by `rlm_desktop.importing` in a worker thread (a large log takes seconds,
which the window's event loop does not wait for), then shown as a saved session is
(`MainWindow.open_session`). A file imported before opens the session it made then, and the
window says so. A file that cannot be imported changes nothing: the importer's one line naming
the file and the line is shown in a message box.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.ui.sessions.imported_banner import source_name
from rlm_desktop.ui.shared import file_dialogs

if TYPE_CHECKING:
    from rlm_desktop.importing import Imported
    from rlm_desktop.ui.replay.controller import ReplayController
    from rlm_desktop.ui.run.starter import RunStarter
    from rlm_desktop.ui.run.status_bar import RunStatusBar

TRAJECTORY_FILTER = "Trajectories (*.jsonl *.json)"
TRAJECTORY_SUFFIXES = (".jsonl", ".json")
"""The files a drop asks the importer about (it decides from their first line)."""
SAY_MS = 8000


class ReviewView(Protocol):
    """Where a session is reviewed (the workspace): its replay and its banner's details."""

    replay: ReplayController

    def set_review_details(self, details: str) -> None:
        """Add `details` to the review banner's tooltip."""


class SessionWindow(Protocol):
    """What a trajectory opens in (the main window): its store, status bar and workspace."""

    starter: RunStarter
    status: RunStatusBar
    workspace: ReviewView

    def open_session(self, session_id: str, call_id: str = "", play: bool = False) -> bool:
        """Show a saved session read-only; False when it cannot be shown (the window says why)."""


class TrajectoryOpener(QObject):
    """Imports trajectory files into the window's session store and opens them read-only.

    `refusal` is the message box that said why the last file could not be opened (None when
    the last one opened), so a test can read it.
    """

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.refusal: QMessageBox | None = None
        self.opening: asyncio.Task[Imported | None] | None = None

    @property
    def window(self) -> SessionWindow:
        """The window the sessions open in (the opener's Qt parent: holding it in an attribute
        too would make a reference cycle)."""
        return cast("SessionWindow", self.parent())

    def choose(self) -> asyncio.Task[Imported | None] | None:
        """Ask for a trajectory file and open it; None when the dialog is cancelled."""
        chosen = file_dialogs.open_file_name(
            cast("QWidget", self.parent()),
            "Open trajectory",
            [TRAJECTORY_FILTER, file_dialogs.ALL_FILES],
            "trajectories",
        )
        return self.open(Path(chosen)) if chosen else None

    def open(self, path: Path, *, readable: bool = False) -> asyncio.Task[Imported | None] | None:
        """Import `path` beside the event loop and open its session (with `readable`, played
        back from the start at a readable pace); None when a run in progress forbids it."""
        window = self.window
        if window.starter.running:
            self._refuse("A run is in progress: stop it (Esc) before opening a trajectory.")
            return None
        window.status.showMessage(f"Opening {fmt.terminal_safe(path.name)}…")
        self.opening = asyncio.ensure_future(self._open(path, readable))
        return self.opening

    async def _open(self, path: Path, readable: bool) -> Imported | None:
        from rlm_desktop.importing import ImportRefused, import_trajectory
        from rlm_desktop.store import StoreError

        window = self.window
        try:
            imported = await asyncio.to_thread(import_trajectory, window.starter.store(), path)
        except ImportRefused as refused:
            self._refuse(str(refused))
            return None
        except (StoreError, OSError) as error:
            name = fmt.terminal_safe(path.name)
            self._refuse(f"{name} cannot be opened: {fmt.one_line(str(error), 200)}")
            return None
        if not window.open_session(imported.session_id):
            return None
        self.refusal = None
        window.status.showMessage(opened_text(path, imported), SAY_MS)
        if readable:
            window.workspace.replay.play_readable()
        return imported

    def _refuse(self, line: str) -> None:
        window = self.window
        window.status.showMessage(line, SAY_MS)
        parent = cast("QWidget", self.parent())
        box = QMessageBox(QMessageBox.Icon.Warning, "Open trajectory", line, parent=parent)
        box.open()
        self.refusal = box


def opened_text(path: Path, imported: Imported) -> str:
    """What the status bar says once a file's session is open."""
    name = fmt.terminal_safe(path.name)
    if imported.duplicate:
        return f"{name} was opened before: this is the session it made then."
    made = f"{fmt.plural(imported.calls, 'call')}, {fmt.plural(imported.turns, 'turn')}"
    return f"Opened {name} ({source_name(imported.source)}): {made}."
