"""The session browser: every saved run, searchable; open one read-only, delete, or export it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.ui.widgets import search_box, when_settled

if TYPE_CHECKING:
    from rlm_desktop.store import Store

COLUMNS = ("Date", "Question", "Documents", "Models", "Status", "Cost", "Time")
EXPORTS = (
    ("md", "Markdown (.md)", "md"),
    ("jsonl", "JSON Lines (.jsonl)", "jsonl"),
    ("otlp", "OpenTelemetry (OTLP JSON)", "json"),
)
ID_ROLE = Qt.ItemDataRole.UserRole + 1
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
SEARCH_SETTLE_MS = 200


def _models(row: dict[str, Any]) -> str:
    model, sub = row.get("model") or "", row.get("sub_model") or ""
    return model if not sub or sub == model else f"{model} / {sub}"


class SessionsDialog(QDialog):
    """Lists sessions from the store; `open_session(id)` asks the window to show one."""

    open_session = Signal(str)

    def __init__(self, store: Store, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.setWindowTitle("Sessions")
        self.setAccessibleName("Sessions")
        self.search = search_box("Search questions, answers and code", "Search sessions")
        self._search_timer = when_settled(
            self.search.textChanged, SEARCH_SETTLE_MS, self.reload, self
        )
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setAccessibleName("Saved sessions")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.itemDoubleClicked.connect(lambda _item: self.open_selected())
        self.count = QLabel()
        self.count.setObjectName("muted")
        self.message = QLabel()
        self.message.setObjectName("muted")
        self.message.setWordWrap(True)

        self.open_button = QPushButton("Open")
        self.open_button.setObjectName("primary")
        self.open_button.setDefault(True)
        self.open_button.clicked.connect(self.open_selected)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.clicked.connect(lambda: self.delete_selected())
        self.format = QComboBox()
        self.format.setAccessibleName("Export format")
        for value, label, _ext in EXPORTS:
            self.format.addItem(label, value)
        self.include_content = QCheckBox("include prompts and code in OTLP spans")
        self.export_button = QPushButton("Export…")
        self.export_button.clicked.connect(lambda: self.export_selected())
        close = QPushButton("Close")
        close.clicked.connect(self.reject)
        QShortcut(QKeySequence.StandardKey.Delete, self.table, lambda: self.delete_selected())

        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.delete_button)
        buttons.addSpacing(16)
        buttons.addWidget(self.format)
        buttons.addWidget(self.include_content)
        buttons.addWidget(self.export_button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.count)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.resize(1100, 560)
        self.reload()

    def done(self, result: int) -> None:
        """Close; a pending search is dropped."""
        self._search_timer.stop()
        super().done(result)

    def reload(self) -> None:
        """List the sessions that match the search box (a pending debounced search is dropped)."""
        self._search_timer.stop()
        text = self.search.text().strip()
        rows = self.store.list_sessions(search=text or None)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cost = fmt.cost(row.get("cost_usd"), bool(row.get("unpriced")))
            values = (
                fmt.when(row.get("started_at")),
                fmt.one_line(row.get("query"), 140),
                str(row.get("documents", 0)),
                _models(row),
                fmt.status_text(row.get("status") or ""),
                cost,
                fmt.seconds(row.get("wall_s")),
            )
            for c, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setData(ID_ROLE, row["id"])
                if c == 1:
                    item.setToolTip(row.get("query") or "")
                if c in (2, 5, 6):
                    item.setTextAlignment(RIGHT)
                self.table.setItem(r, c, item)
        if rows:
            self.table.selectRow(0)
        noun = "session" if len(rows) == 1 else "sessions"
        self.count.setText(f"{len(rows)} {noun}" + (f" matching “{text}”" if text else ""))
        for button in (self.open_button, self.delete_button, self.export_button):
            button.setEnabled(bool(rows))

    def selected_id(self) -> str | None:
        """The id of the selected session."""
        items = self.table.selectedItems()
        return str(items[0].data(ID_ROLE)) if items else None

    def select_id(self, session_id: str) -> bool:
        """Select the row of `session_id`."""
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.data(ID_ROLE) == session_id:
                self.table.selectRow(row)
                return True
        return False

    def open_selected(self) -> None:
        """Open the selected session in the window, read-only."""
        session_id = self.selected_id()
        if session_id is not None:
            self.open_session.emit(session_id)
            self.accept()

    def delete_selected(self, confirm: bool = True) -> str | None:
        """Delete the selected session (asking first unless `confirm` is False)."""
        session_id = self.selected_id()
        if session_id is None:
            return None
        if confirm:
            answer = QMessageBox.question(
                self,
                "Delete session",
                "Delete this session and everything recorded with it? This cannot be undone.",
            )
            if answer != QMessageBox.StandardButton.Yes:
                return None
        from rlm_desktop.store import StoreError

        try:
            self.store.delete(session_id)
        except StoreError as error:
            self.message.setText(str(error))
            return None
        self.message.setText(f"Deleted session {fmt.short_id(session_id)}.")
        self.reload()
        return session_id

    def export_selected(self, path: Path | None = None) -> Path | None:
        """Export the selected session in the chosen format to `path` (asked for if None)."""
        session_id = self.selected_id()
        if session_id is None:
            return None
        fmt_value = self.format.currentData()
        ext = next(e for v, _label, e in EXPORTS if v == fmt_value)
        if path is None:
            chosen, _ = QFileDialog.getSaveFileName(
                self, "Export session", f"rlm-session-{session_id[:8]}.{ext}"
            )
            if not chosen:
                return None
            path = Path(chosen)
        from rlm_desktop.store import export

        text = export(self.store, session_id, fmt_value, self.include_content.isChecked())
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self.message.setText(f"Could not write {path}: {exc.strerror}. Choose another folder.")
            return None
        self.message.setText(f"Exported to {path}.")
        return path
