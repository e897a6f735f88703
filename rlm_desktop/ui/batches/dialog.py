"""The Batches view: the batches `rlm-desktop batch` stored (`batch_list`) and, for the one
chosen, its rows (`rows_table`); double-click a row, or Enter, to open its run in the window
(`open_session(id, "")`), as the evaluation page opens a run. What it shows is read from the
store (`listing`); nothing here runs a batch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QPushButton, QSplitter, QVBoxLayout, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.ui.batches.batch_list import BatchList, rows_line
from rlm_desktop.ui.batches.listing import NOT_RUN, BatchEntry, batch_entries, batch_rows
from rlm_desktop.ui.batches.row_details import RowDetails
from rlm_desktop.ui.batches.rows_table import RowsTable
from rlm_desktop.ui.shared.widgets import (
    ElidedLabel,
    dialog_buttons,
    note_label,
    plain_label,
    resize_within_screen,
)

if TYPE_CHECKING:
    from rlm_desktop.batch.records import RowResult
    from rlm_desktop.store import Store

LIST_WIDTH = 240
NOTHING_CHOSEN = "Choose a batch to see its rows."
NONE_STORED = "No batches stored yet."
NO_ROWS = "No row of this batch has finished yet, and its questions cannot be listed."


class BatchesDialog(QDialog):
    """The stored batches and their rows; `open_session(id, "")` asks the window to open a
    row's run."""

    open_session = Signal(str, str)

    def __init__(self, store: Store, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.shown: BatchEntry | None = None
        """The batch whose rows are on the page."""
        self.setWindowTitle("Batches")
        self.setAccessibleName("Batches")
        self.batches = BatchList()
        self.batches.chosen.connect(self.show_batch)
        self.heading = ElidedLabel(NOTHING_CHOSEN)
        self.heading.setObjectName("cardTitle")
        self.table = RowsTable()
        self.table.itemDoubleClicked.connect(lambda _item: self.open_selected())
        self.details = RowDetails()
        self.table.itemSelectionChanged.connect(
            lambda: self.details.show_row(self.table.current_result())
        )
        self.note = note_label("")
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.message = plain_label()
        self.message.setWordWrap(True)
        self.open_button = QPushButton("&Open session")
        self.open_button.setToolTip("Open the selected row's run in the window (Enter)")
        self.open_button.setDefault(True)
        self.open_button.clicked.connect(self.open_selected)
        self.refresh_button = QPushButton("&Refresh")
        self.refresh_button.setToolTip("Read the batches again (one may be running elsewhere)")
        self.refresh_button.clicked.connect(self.refresh)
        self._layout()
        self.refresh()

    def _layout(self) -> None:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        rows = QSplitter(Qt.Orientation.Vertical)
        rows.setObjectName("batchRowsSplitter")
        rows.addWidget(self.table)
        rows.addWidget(self.details)
        rows.setStretchFactor(0, 3)
        rows.setStretchFactor(1, 1)
        rows.setChildrenCollapsible(False)
        layout.addWidget(rows, 1)
        layout.addWidget(self.note)
        layout.addWidget(self.message)
        split = self.splitter = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("batchesSplitter")
        split.addWidget(self.batches)
        split.addWidget(page)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        split.setSizes([LIST_WIDTH, 960])
        outer = QVBoxLayout(self)
        outer.addWidget(split, 1)
        outer.addLayout(dialog_buttons(self, [self.open_button, self.refresh_button]))
        resize_within_screen(self, LIST_WIDTH + 960, 720)

    def refresh(self) -> None:
        """Read the batches again, keeping the one shown (the newest when none is)."""
        entries = batch_entries(self.store)
        current = self.shown.record.id if self.shown else None
        if current not in {entry.record.id for entry in entries}:
            current = entries[0].record.id if entries else None
        self.batches.refresh(entries, current)
        if current is None:
            self._show(None)
        else:
            self.show_batch(current)

    def show_batch(self, batch_id: str) -> bool:
        """Show the rows of batch `batch_id`; False when it is not stored."""
        entry = next((e for e in self.batches.entries if e.record.id == batch_id), None)
        self._show(entry)
        self.batches.select(batch_id if entry else None)
        return entry is not None

    def _show(self, entry: BatchEntry | None) -> None:
        self.shown = entry
        self.say("")
        if entry is None:
            self.heading.setText(NOTHING_CHOSEN if self.batches.entries else NONE_STORED)
            self.table.show_rows([])
            self._note("")
            self._enable()
            return
        self.heading.setText(
            f"{entry.name} · {entry.state} · {rows_line(entry)}"
            + (f" · {fmt.model_name(entry.model)}" if entry.model else "")
        )
        rows = batch_rows(self.store, entry)
        self.table.show_rows(rows.rows)
        self._note(rows.note or ("" if rows.rows else NO_ROWS))
        self._enable()

    def _note(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def say(self, text: str) -> None:
        """Show one line under the rows (why a row cannot be opened)."""
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def _enable(self) -> None:
        self.open_button.setEnabled(bool(self.table.results))
        self.details.show_row(self.table.current_result())

    def open_selected(self) -> bool:
        """Ask the window to open the selected row's run; False, with why, when it has none."""
        result = self.table.current_result()
        if result is None:
            return False
        if not result.session_id:
            self.say(f"Row {result.row_id} has no session: {why_none(result)}")
            return False
        self.say("")
        self.open_session.emit(result.session_id, "")
        return True


def why_none(result: RowResult) -> str:
    """Why a row has no run to open."""
    if result.status == NOT_RUN:
        return result.error or "it has not run yet"
    reason = fmt.one_line(result.error or "", 200)
    return f"{fmt.status_text(result.status)} before it ran" + (f": {reason}" if reason else "")
