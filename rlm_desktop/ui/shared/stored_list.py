"""A titled list of stored work (past evaluations, batches), newest first, each item with its
state's icon, a few lines of text and a tooltip; an empty list gives way to a note. Choosing one
emits its id; one whose id is not in the app's shape (a shared or damaged database) is listed as
damaged and cannot be chosen. The kinds say how an entry reads (`Listed`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from rlm_desktop import ids
from rlm_desktop.ui.appearance.theme import status_icon
from rlm_desktop.ui.shared.widgets import note_label

ID_ROLE = Qt.ItemDataRole.UserRole
Entry = TypeVar("Entry")


@dataclass(frozen=True)
class Listed:
    """How one entry is listed: its id, the run status whose icon stands for it, its text and
    its tooltip."""

    id: str
    status: str
    text: str
    tip: str


class StoredList(QWidget, Generic[Entry]):
    """The list; `chosen(id)` when the user picks one, `refresh` fills it again."""

    chosen = Signal(str)

    def __init__(
        self,
        title: str,
        empty: str,
        listed: Callable[[Entry], Listed],
        *,
        elide: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.entries: list[Entry] = []
        self._listed = listed
        heading = QLabel(title)
        heading.setObjectName("cardTitle")
        self.list = QListWidget()
        self.list.setAccessibleName(title)
        self.list.setTextElideMode(elide)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentItemChanged.connect(self._current_changed)
        self.empty = note_label(empty)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(heading)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        layout.addStretch(0)
        self.refresh([])

    def refresh(self, entries: Sequence[Entry], current: str | None = None) -> None:
        """List `entries` (newest first), with `current` selected, without emitting `chosen`."""
        self.entries = list(entries)
        with QSignalBlocker(self.list):
            self.list.clear()
            for entry in entries:
                listed = self._listed(entry)
                item = QListWidgetItem(status_icon(listed.status), listed.text)
                item.setData(ID_ROLE, listed.id)
                item.setToolTip(listed.tip)
                if not ids.is_well_formed(listed.id):  # shown, never chosen: nothing acts on it
                    item.setText(f"Damaged: {listed.text}")
                    item.setToolTip(ids.malformed(listed.id, "stored"))
                    item.setFlags(Qt.ItemFlag.NoItemFlags)
                self.list.addItem(item)
            self.select(current)
        self.list.setVisible(bool(entries))
        self.empty.setVisible(not entries)

    def select(self, entry_id: str | None) -> None:
        """Select the entry `entry_id` (none: clear the selection), without emitting."""
        with QSignalBlocker(self.list):
            ids = [self._listed(entry).id for entry in self.entries]
            row = ids.index(entry_id) if entry_id in ids else -1
            self.list.setCurrentRow(row)
            if row < 0:
                self.list.clearSelection()

    def _current_changed(self, item: QListWidgetItem | None, _previous: object) -> None:
        if item is not None:
            self.chosen.emit(str(item.data(ID_ROLE)))
