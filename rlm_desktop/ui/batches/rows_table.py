"""One batch's rows: row id, question, status (the app's words, icon and colour for it), the
answer's start (or, for a row without one, why), cost, findings and where it ran. Everything a
model or the questions file wrote is shown as plain text."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.batch.records import RowResult
from rlm_desktop.ui.appearance.theme import status_icon, tone_color
from rlm_desktop.ui.batches.listing import NOT_RUN
from rlm_desktop.ui.batches.plain import plain_tip

COLUMNS = ("row", "question", "status", "answer", "cost", "findings", "ran on")
QUESTION, STATUS, ANSWER, COST, FINDINGS, PLACE = 1, 2, 3, 4, 5, 6
WIDEST = {QUESTION: 200, ANSWER: 320, PLACE: 240}
"""The most each long column takes when sized to its contents (the user may widen it)."""
EXCERPT_CHARS = 160
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def answer_cell(result: RowResult) -> str:
    """The answer's start on one line, or why the row has none."""
    if result.answer:
        return fmt.one_line(result.answer, EXCERPT_CHARS)
    if result.error:
        return fmt.one_line(result.error, EXCERPT_CHARS)
    return "no answer"


def findings_tip(result: RowResult) -> str:
    """The row's findings, one a line (`kind: message`)."""
    return "\n".join(f"{f.get('kind', '?')}: {f.get('message', '')}" for f in result.findings)


def where(result: RowResult) -> str:
    """Where the row ran; nothing for a row that left no run (or whose run is still going)."""
    if not result.session_id or result.status == "running":
        return ""
    return fmt.placement(result.executor, result.node, result.attempts)


class RowsTable(QTableWidget):
    """The table; `results[row]` is the result shown on that row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.results: list[RowResult] = []
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setAccessibleName("Rows of the batch")
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)

    def show_rows(self, results: Sequence[RowResult]) -> None:
        """Show `results`, one a row, the first selected."""
        self.results = list(results)
        self.setRowCount(len(self.results))
        for row, result in enumerate(self.results):
            for column, item in enumerate(self._items(result)):
                self.setItem(row, column, item)
        self.resizeColumnsToContents()
        for column, widest in WIDEST.items():
            self.setColumnWidth(column, min(self.columnWidth(column), widest))
        if self.results:
            self.selectRow(0)

    def current_result(self) -> RowResult | None:
        """The result on the selected row."""
        row = self.currentRow()
        return self.results[row] if 0 <= row < len(self.results) else None

    def _items(self, result: RowResult) -> list[QTableWidgetItem]:
        priced = bool(result.session_id) and result.status not in (NOT_RUN, "running")
        texts = [
            result.row_id,
            fmt.one_line(result.question, EXCERPT_CHARS),
            fmt.status_text(result.status),
            answer_cell(result),
            fmt.cost(result.cost_usd, result.unpriced) if priced else "",
            f"{len(result.findings):,}" if priced else "",
            where(result),
        ]
        items = [QTableWidgetItem(text) for text in texts]
        items[QUESTION].setToolTip(plain_tip(result.question))
        status = items[STATUS]
        status.setIcon(status_icon(result.status))
        if result.failed:
            status.setForeground(QColor(tone_color(result.status)))
        answer = items[ANSWER]
        answer.setToolTip(plain_tip(result.answer or result.error or "no answer"))
        if not result.answer:
            answer.setForeground(QColor(tone_color(NOT_RUN)))  # why, not what the model said
        if result.findings:
            items[FINDINGS].setToolTip(plain_tip(findings_tip(result)))
        if result.attempts > 1:
            items[PLACE].setToolTip("Run a second time: the node it was first sent to died.")
        for column in (COST, FINDINGS):
            items[column].setTextAlignment(RIGHT)
        return items
