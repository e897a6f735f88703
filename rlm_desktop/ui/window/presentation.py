"""The Presentation view (View → Presentation, F5), for showing a run on a projector: the window
full screen, the type as large as the screen allows (up to `PRESENT_POINTS`), the call tree and
the console given the room (the documents pane and the run settings put away, the detail pane
on its Console tab), and a clicker's Page Down / Page Up stepping a replay turn by turn.

Leaving it (F5 again) puts back exactly what was there: the window's state, the type size, the
panes and the splitters. Nothing of it is saved: the interface size chosen in Settings or by
zooming stays the user's, and a window closed while presenting remembers the layout it had
before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QByteArray, QRect, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMainWindow

from rlm_desktop.ui.tree.columns import COLUMNS
from rlm_desktop.ui.window.detail_tabs import CONSOLE
from rlm_desktop.ui.window.workspace import Workspace
from rlm_desktop.ui.window.zoom import Zoom

PRESENT_POINTS = 20
"""The type size a presentation aims for; less where the screen has no room for it."""
PRESENTED_COLUMNS = ("Call", "Status", "Time")
"""The tree's columns an audience reads; the others are put away while presenting."""
CONSOLE_SHARE = 0.55
"""The share of the run area's width the console takes while presenting."""
ENTERED = "Presenting: F5 leaves"


@dataclass
class _Before:
    """What the presentation changed, to be put back."""

    points: int
    window_state: Qt.WindowState
    geometry: QRect
    splitters: dict[str, QByteArray] = field(default_factory=dict)
    header: QByteArray = field(default_factory=QByteArray)
    documents_shown: bool = True
    conversations_shown: bool = False
    tab: int = CONSOLE


class Presentation:
    """Enters and leaves the Presentation view of `window`. `steps` are replay actions and the
    key each also takes while presenting (a clicker's); `after_zoom` is called after each change
    of type size (the console rebuilds its code boxes)."""

    def __init__(
        self,
        window: QMainWindow,
        workspace: Workspace,
        zoom: Zoom,
        steps: Sequence[tuple[QAction, str]],
        after_zoom: Callable[[], object],
    ) -> None:
        self._window = window
        self._workspace = workspace
        self._zoom = zoom
        self._steps = steps
        self._step_keys = [list(action.shortcuts()) for action, _key in steps]
        self._after_zoom = after_zoom
        self._before: _Before | None = None

    @property
    def active(self) -> bool:
        """True while the window is in the Presentation view."""
        return self._before is not None

    def set_active(self, active: bool) -> None:
        """Enter or leave the Presentation view."""
        if active and self._before is None:
            self._enter()
        elif not active and self._before is not None:
            self._leave(self._before)

    def _enter(self) -> None:
        window, ws = self._window, self._workspace
        splitters = ws.splitters()
        self._before = _Before(
            points=self._zoom.points,
            window_state=window.windowState(),
            geometry=window.geometry(),
            splitters={s.objectName(): s.saveState() for s in splitters},
            header=ws.tree_panel.view.header().saveState(),
            documents_shown=not ws.documents.isHidden(),
            conversations_shown=not ws.conversations.isHidden(),
            tab=ws.detail_tabs.currentIndex(),
        )
        self._zoom.persist = False
        window.showFullScreen()
        ws.documents.hide()  # hidden, not folded: its least width then leaves room for type
        ws.conversations.hide()
        ws.controls.set_compact(True)
        ws.detail_tabs.show_tab(CONSOLE)
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)  # restyling takes a moment
        try:
            self._zoom.enlarge_to(max(PRESENT_POINTS, self._zoom.points), self._console_has_room)
            self._after_zoom()
        finally:
            QApplication.restoreOverrideCursor()
        width = sum(ws.run_splitter.sizes())
        ws.run_splitter.setSizes([round(width * (1 - CONSOLE_SHARE)), round(width * CONSOLE_SHARE)])
        self._present_columns()
        for (action, key), keys in zip(self._steps, self._step_keys, strict=True):
            action.setShortcuts([*keys, QKeySequence(key)])
        window.statusBar().showMessage(ENTERED, 8000)

    def _present_columns(self) -> None:
        """The tree shows the call, its status and its time, the call's text taking the room."""
        view = self._workspace.tree_panel.view
        for number, column in enumerate(COLUMNS):
            view.setColumnHidden(number, column.title not in PRESENTED_COLUMNS)
        others = sum(
            view.columnWidth(n) for n in range(1, len(COLUMNS)) if not view.isColumnHidden(n)
        )
        view.setColumnWidth(0, max(view.columnWidth(0), view.viewport().width() - others))

    def _console_has_room(self) -> bool:
        """True while the tree, at its least, leaves the console its share of the width."""
        ws = self._workspace
        least: int = ws.tree_panel.minimumSizeHint().width()
        return least <= ws.run_splitter.width() * (1 - CONSOLE_SHARE)

    def _leave(self, before: _Before) -> None:
        window, ws = self._window, self._workspace
        for (action, _key), keys in zip(self._steps, self._step_keys, strict=True):
            action.setShortcuts(keys)
        self._zoom.restore(before.points)
        self._zoom.persist = True
        ws.documents.setVisible(before.documents_shown)
        ws.conversations.setVisible(before.conversations_shown)
        ws.controls.set_compact(False)
        ws.detail_tabs.show_tab(before.tab)
        if before.window_state & Qt.WindowState.WindowFullScreen:
            pass  # it was full screen before presenting: it stays so
        elif before.window_state & Qt.WindowState.WindowMaximized:
            window.showMaximized()
        else:
            window.showNormal()
            window.setGeometry(before.geometry)
        ws.tree_panel.view.header().restoreState(before.header)
        for splitter in ws.splitters():
            state = before.splitters.get(splitter.objectName())
            if state is not None:
                splitter.restoreState(state)
        self._before = None
        self._after_zoom()
        window.statusBar().clearMessage()
