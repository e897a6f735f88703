"""The view the window was left in, opened again at the next start.

A saved session in view (one being reviewed, or the run that just finished) is reopened
read-only, as the Sessions dialog opens one, at the call that was chosen and on the detail
pane's tab that was in view; a new-run view comes back with its question typed. A session
deleted since is passed over without a word: the window opens on a new run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.workspace import Workspace

if TYPE_CHECKING:
    from rlm_desktop.store import Store

SESSION = "window/last_session"
QUESTION = "window/last_question"
CALL = "window/last_call"
TAB = "window/last_tab"


class LastView:
    """Remembers what `workspace` shows (`save`) and shows it again (`reopen`): a session
    through `open_session` (the window's), checked first in the `store` it opens."""

    def __init__(
        self,
        workspace: Workspace,
        prefs: Preferences,
        open_session: Callable[[str, str], bool],
        store: Callable[[], Store],
    ) -> None:
        self.workspace = workspace
        self.prefs = prefs
        self.open_session = open_session
        self.store = store

    def session_in_view(self) -> str:
        """The id of the saved session the window shows: one under review, or the live run once
        it ended ("" for a new run)."""
        workspace = self.workspace
        run = workspace.model.tree.run
        ended = workspace.reviewing is not None or run.finished is not None
        return run.run_id if ended else ""

    def save(self) -> None:
        """Remember the session in view, or the question of a new run."""
        session = self.session_in_view()
        question = "" if session else self.workspace.controls.question.toPlainText()
        chosen = self.workspace.tree_panel.selected() if session else None
        self.prefs.set_many(
            {
                SESSION: session or None,
                QUESTION: question or None,
                CALL: chosen.call_id if chosen is not None else None,
                TAB: self.workspace.detail_tabs.currentIndex() if session else None,
            }
        )

    def reopen(self) -> None:
        """Show the session or the question remembered."""
        question = self.prefs.get_str(QUESTION)
        if question and not self.workspace.controls.question.toPlainText():
            self.workspace.controls.question.setPlainText(question)
        session = self.prefs.get_str(SESSION)
        if (
            session
            and self._still_saved(session)
            and self.open_session(session, self.prefs.get_str(CALL))
        ):
            tab = self.prefs.get_int(TAB, -1)
            if 0 <= tab < self.workspace.detail_tabs.count():
                self.workspace.detail_tabs.show_tab(tab)

    def _still_saved(self, session: str) -> bool:
        from rlm_desktop.store import StoreError

        try:
            self.store().session(session)
        except StoreError:
            return False
        return True
