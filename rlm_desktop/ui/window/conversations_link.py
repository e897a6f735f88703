"""The conversations sidebar's part in the window: listing the store's conversations when they
may have changed (at start, after a run, after sessions were deleted), opening the one chosen,
marking the one in view, and making room for the sidebar on a narrow screen."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow

from rlm_desktop.ui.run.starter import RunStarter
from rlm_desktop.ui.run.status_bar import RunStatusBar
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.layout_memory import available_area
from rlm_desktop.ui.window.workspace import Workspace


class Host(Protocol):
    """What the link needs of the main window."""

    workspace: Workspace
    starter: RunStarter
    prefs: Preferences
    status: RunStatusBar
    documents_action: QAction
    conversations_action: QAction

    @property
    def painted(self) -> bool: ...

    def open_session(self, session_id: str, call_id: str = "", play: bool = False) -> bool: ...

    def leave_review(self) -> None: ...


WIDE_SCREEN_PX = 1600
"""Logical pixels of screen width from which the conversations are shown at first start."""
FOLDED = "The documents pane is folded to make room (View → Documents pane brings it back)."
MADE_WAY = "The conversations are put away to make room (View → Conversations brings them back)."


class ConversationsLink(QObject):
    """Ties the conversations sidebar of `host` (the main window, `window` as a widget) to its
    store and its review of saved sessions."""

    def __init__(self, window: QMainWindow, host: Host) -> None:
        super().__init__(window)  # a Qt object of the window's: its slots end with the window
        self._widget = window
        self._window = host
        self._pane = host.workspace.conversations
        self._reviewed: str | None = None
        self._pane.open_requested.connect(self._open)
        self._pane.new_requested.connect(self._new)
        host.starter.run_finished.connect(self.refresh)

    def shown_at_start(self) -> bool:
        """As it was left; at the first start, shown where the screen is wide."""
        return self._window.prefs.get_bool("window/conversations", default=self._wide())

    def _wide(self) -> bool:
        """True where the screen holds the sidebar and the documents pane side by side (on a
        narrower one, showing either folds the other: with both, the run's panes would not fit
        at 1024×640 or at a projector's type size)."""
        return available_area(self._widget).width() >= WIDE_SCREEN_PX

    def documents_toggled(self, shown: bool) -> None:
        """The documents pane came back: on a narrow screen the sidebar makes way."""
        if shown and not self._wide() and not self._pane.isHidden():
            self._window.conversations_action.setChecked(False)
            self._window.status.showMessage(MADE_WAY, 8000)

    def show(self, shown: bool) -> None:
        """Show or hide the sidebar; where the screen has no room for it beside the documents,
        the documents pane folds (and the status bar says so)."""
        window = self._window
        self._pane.setVisible(shown)
        window.prefs.set("window/conversations", shown)
        if not shown:
            return
        if not self._wide() and window.workspace.documents_shown():
            window.documents_action.setChecked(False)
            window.status.showMessage(FOLDED, 8000)
        if window.painted:
            self.refresh()

    def refresh(self) -> None:
        """List the conversations again, if the sidebar is shown."""
        if self._pane.isHidden():
            return
        import sqlite3  # the store's stack loads after the first paint

        from rlm_desktop.store.store import StoreError
        from rlm_desktop.store.threads import conversations

        try:
            found = conversations(self._window.starter.store())
        except (StoreError, sqlite3.Error, OSError) as error:
            self._window.status.showMessage(f"The conversations cannot be read: {error}", 8000)
            return
        current = next((c.id for c in found if c.latest_id == self._reviewed), "")
        self._pane.show_conversations(found, current)

    def opened(self, head: dict[str, Any]) -> None:
        """A saved session is in view: mark its conversation."""
        self._reviewed = str(head["id"])
        settings = head.get("settings") or {}
        self._pane.mark(str(settings.get("conversation_id") or head["id"]))

    def left(self) -> None:
        """Back to a new run: no conversation is in view."""
        self._reviewed = None
        self._pane.mark("")

    def _open(self, session_id: str) -> None:
        """Open a conversation's newest question; one deleted since leaves the list."""
        if session_id == self._reviewed:
            return
        from rlm_desktop.store.store import SessionNotFound

        try:
            self._window.open_session(session_id)
        except SessionNotFound:
            self._window.status.showMessage("That conversation was deleted.", 6000)
            self.refresh()

    def _new(self) -> None:
        window = self._window
        if window.workspace.reviewing:
            window.leave_review()
        window.workspace.controls.question.clear()
        window.workspace.controls.question.setFocus()
