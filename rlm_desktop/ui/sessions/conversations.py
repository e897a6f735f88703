"""The conversations sidebar (View → Conversations): the user's threads beside the workspace, as
Jan and LM Studio keep them, the one asked in most recently first. Each is a question and its
follow-ups; choosing one opens its newest question read-only (to go on from it with a
follow-up), *New* returns to a new run. Evaluation trials are not listed (they are the
evaluation page's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.ui.shared.widgets import note_label

if TYPE_CHECKING:
    from rlm_desktop.store.threads import Conversation  # the store loads after the first paint

LEAST_WIDTH_CHARS = 22
"""The sidebar is never narrower than this many average characters."""
ID_ROLE = Qt.ItemDataRole.UserRole
LATEST_ROLE = Qt.ItemDataRole.UserRole + 1


def conversation_lines(conversation: Conversation) -> tuple[str, str]:
    """What a conversation's entry says: its first question, then how many questions, how the
    newest ended and when it was asked."""
    details = [
        fmt.plural(conversation.questions, "question"),
        fmt.status_text(conversation.latest_status),
        fmt.when(conversation.latest_at),
    ]
    return fmt.one_line(conversation.title, 200) or "(no question)", " · ".join(details)


class ConversationsPane(QWidget):
    """The list of conversations; `open_requested` carries the session to open, `new_requested`
    asks for a new run."""

    open_requested = Signal(str)
    new_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Conversations")
        title = QLabel("Conversations")
        title.setObjectName("cardTitle")
        self.new_button = QPushButton("New")
        self.new_button.setToolTip("Leave the conversation in view for a new question")
        self.new_button.setAccessibleName("New conversation")
        self.new_button.clicked.connect(self.new_requested)
        self.list = QListWidget()
        self.list.setAccessibleName("Conversations list")
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setWordWrap(False)
        self.list.setUniformItemSizes(False)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setAlternatingRowColors(True)
        self.list.setSpacing(1)
        self.list.itemActivated.connect(self._chosen)
        self.list.itemClicked.connect(self._chosen)
        self.empty = note_label(
            "No conversations yet. Each question you run is kept here with its follow-ups."
        )
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(title, 1)
        head.addWidget(self.new_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        self.setMinimumWidth(self.fontMetrics().averageCharWidth() * LEAST_WIDTH_CHARS)
        self.show_conversations([])

    def show_conversations(self, conversations: Sequence[Conversation], current: str = "") -> None:
        """List `conversations`, marking the one whose session `current` is in view."""
        self.list.clear()
        for conversation in conversations:
            first, second = conversation_lines(conversation)
            item = QListWidgetItem(f"{first}\n{second}")
            item.setToolTip(f"{conversation.title}\n{second}")
            item.setData(ID_ROLE, conversation.id)
            item.setData(LATEST_ROLE, conversation.latest_id)
            self.list.addItem(item)
        self.empty.setVisible(not conversations)
        self.list.setVisible(bool(conversations))
        self.mark(current)

    def mark(self, conversation_id: str) -> None:
        """Select the entry of `conversation_id` ("" selects none)."""
        self.list.clearSelection()
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item is not None and conversation_id and item.data(ID_ROLE) == conversation_id:
                self.list.setCurrentItem(item)
                return
        self.list.setCurrentRow(-1)

    def _chosen(self, item: QListWidgetItem) -> None:
        self.open_requested.emit(str(item.data(LATEST_ROLE)))
