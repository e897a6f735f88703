"""The Batches view's list of stored batches, newest first: when, the questions file, rows done
of the total and what it cost, with its state's icon. Choosing one emits its id."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.ui.appearance.theme import status_icon
from rlm_desktop.ui.batches.listing import BatchEntry
from rlm_desktop.ui.batches.plain import plain_tip
from rlm_desktop.ui.evaluation.past import STATUS_OF_STATE, when
from rlm_desktop.ui.shared.widgets import note_label

ID_ROLE = Qt.ItemDataRole.UserRole
EMPTY = (
    "No batches yet. Run one in a terminal with <code style='white-space:nowrap'>rlm-desktop "
    "batch</code> <code style='white-space:nowrap'>--questions FILE</code>: a CSV or JSONL file, "
    "a question and its documents a row. Each batch is listed here with its rows; double-click "
    "a row to open its run in the window."
)


def rows_line(entry: BatchEntry) -> str:
    """`7 of 10 rows · 2 failed · $0.042`."""
    parts = [f"{entry.done:,} of {fmt.plural(entry.record.rows, 'row')}"]
    if entry.failed:
        parts.append(f"{entry.failed:,} failed")
    parts.append(fmt.cost(entry.spent_usd, entry.unpriced))
    return " · ".join(parts)


def item_text(entry: BatchEntry) -> str:
    """Three lines: when and the state; the questions file's name; rows and cost."""
    return "\n".join(
        [f"{when(entry.record.created_at)} · {entry.state}", entry.name, rows_line(entry)]
    )


def item_tip(entry: BatchEntry) -> str:
    """Everything about one batch, a line each."""
    record = entry.record
    return "\n".join(
        [
            f"Batch {record.id}, created {when(record.created_at)} · {entry.state}",
            f"Questions: {record.questions}",
            f"Model: {entry.model or '—'}",
            rows_line(entry),
        ]
    )


class BatchList(QWidget):
    """The list; `chosen(id)` when the user picks one, `refresh` fills it again."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entries: list[BatchEntry] = []
        title = QLabel("Batches")
        title.setObjectName("cardTitle")
        self.list = QListWidget()
        self.list.setAccessibleName("Batches")
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentItemChanged.connect(self._current_changed)
        self.empty = note_label(EMPTY)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        layout.addStretch(0)
        self.refresh([])

    def refresh(self, entries: Sequence[BatchEntry], current: str | None = None) -> None:
        """List `entries` (newest first), with `current` selected, without emitting `chosen`."""
        self.entries = list(entries)
        with QSignalBlocker(self.list):
            self.list.clear()
            for entry in entries:
                item = QListWidgetItem(status_icon(STATUS_OF_STATE[entry.state]), item_text(entry))
                item.setData(ID_ROLE, entry.record.id)
                item.setToolTip(plain_tip(item_tip(entry)))
                self.list.addItem(item)
            self.select(current)
        self.list.setVisible(bool(entries))
        self.empty.setVisible(not entries)

    def select(self, batch_id: str | None) -> None:
        """Select the batch `batch_id` (none: clear the selection), without emitting."""
        with QSignalBlocker(self.list):
            row = next((i for i, e in enumerate(self.entries) if e.record.id == batch_id), -1)
            self.list.setCurrentRow(row)
            if row < 0:
                self.list.clearSelection()

    def _current_changed(self, item: QListWidgetItem | None, _previous: object) -> None:
        if item is not None:
            self.chosen.emit(str(item.data(ID_ROLE)))
