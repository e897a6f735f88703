"""The follow-up line under the question: after a run, ask the next question in the same REPL state.

"Ask a follow-up" turns the next run into a follow-up of the last one: it goes on in the REPL
variables the last question left, the model is told the earlier questions and answers, and
documents added meanwhile become `context_1`, `context_2`, ... Later runs go on in the same
conversation until "New question" goes back to runs of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.ui.shared.widgets import plain_label

SHOWN_QUESTION_CHARS = 90


@dataclass(frozen=True)
class FollowUpLink:
    """The question a follow-up goes on from, and the conversation it belongs to."""

    follows: str
    conversation_id: str
    query: str


class FollowUpBar(QWidget):
    """Offers a follow-up once a run has ended; while one is asked, says which question it
    follows. `began` fires when the user chooses to ask one (the window clears the question box)."""

    began = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._offered: FollowUpLink | None = None
        self._active: FollowUpLink | None = None
        self.label = plain_label()
        self.label.setObjectName("muted")
        self.label.setWordWrap(True)
        self.label.setAccessibleName("Follow-up")
        self.ask_button = QPushButton("Ask a follow-up")
        self.ask_button.setAccessibleName("Ask a follow-up")
        self.ask_button.setToolTip(
            "Ask the next question in the same REPL: its variables, the earlier questions and "
            "answers carry over; documents you add become new contexts"
        )
        self.ask_button.clicked.connect(self.begin)
        self.new_button = QPushButton("New question")
        self.new_button.setAccessibleName("New question")
        self.new_button.setToolTip("Ask the next question on its own, with an empty REPL")
        self.new_button.clicked.connect(self.end)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.ask_button)
        layout.addWidget(self.new_button)
        self._show()

    def offer(self, session_id: str, query: str, conversation_id: str | None = None) -> None:
        """A run ended: offer to go on from it. Within a conversation (the run was a follow-up)
        the next question follows this one, until "New question"."""
        self._offered = FollowUpLink(session_id, conversation_id or session_id, query)
        if self._active is not None:
            self._active = self._offered
        self._show()

    def begin(self) -> None:
        """Make the next run a follow-up of the question offered."""
        if self._offered is None:
            return
        self._active = self._offered
        self._show()
        self.began.emit()

    def end(self) -> None:
        """Make the next run a question of its own."""
        self._active = None
        self._show()

    def link(self) -> FollowUpLink | None:
        """The question the next run follows, while a follow-up is being asked."""
        return self._active

    def _show(self) -> None:
        active, offered = self._active, self._offered
        if active is not None:
            question = fmt.one_line(active.query, SHOWN_QUESTION_CHARS)
            self.label.setText(
                f"Follow-up to “{question}”: the REPL keeps its variables; documents you add "
                "now become new contexts."
            )
        self.label.setVisible(active is not None)
        self.ask_button.setVisible(offered is not None and active is None)
        self.new_button.setVisible(active is not None)
        self.setVisible(offered is not None)
