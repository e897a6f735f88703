"""What an evaluation has to show, live or reopened from the store: a progress bar per setting,
the runs (double-click opens one in the main view), the results table with its footer, and
the score-against-cost plot."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QProgressBar,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.evaluation.report import HEADERS, table_rows
from rlm_desktop.evaluation.summary import SettingSummary
from rlm_desktop.evaluation.trial import TrialResult
from rlm_desktop.ui.evaluation.plot import ScoreCostPlot
from rlm_desktop.ui.shared.widgets import plain_label

RUN_COLUMNS = ("setting", "task", "score", "status", "cost", "wall", "session")
SESSION_ROLE = Qt.ItemDataRole.UserRole


class EvaluationResults(QWidget):
    """The bars and the three tabs; `open_session(id)` when a run is double-clicked."""

    open_session = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bars: dict[str, QProgressBar] = {}
        self._bars_box = QGridLayout()
        self.runs = QTableWidget(0, len(RUN_COLUMNS))
        self.runs.setHorizontalHeaderLabels(RUN_COLUMNS)
        self.runs.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.runs.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.runs.cellDoubleClicked.connect(self._open_row)
        self.summary = QTableWidget(0, len(HEADERS))
        self.summary.setHorizontalHeaderLabels(HEADERS)
        self.summary.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.footer = plain_label()
        self.footer.setWordWrap(True)
        self.footer.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.plot = ScoreCostPlot()
        summary_page = QWidget()
        summary_layout = QVBoxLayout(summary_page)
        summary_layout.addWidget(self.summary, 1)
        summary_layout.addWidget(self.footer)
        tabs = self.tabs = QTabWidget()
        tabs.addTab(self.runs, "Runs (double-click to open)")
        tabs.addTab(summary_page, "Results")
        tabs.addTab(self.plot, "Score vs cost")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._bars_box)
        layout.addWidget(tabs, 1)

    def clear(self, settings: Sequence[tuple[str, int]] = ()) -> None:
        """Empty everything, then give each `(setting, trials)` a bar."""
        while self._bars_box.count():
            item = self._bars_box.takeAt(0)
            if item is not None and (widget := item.widget()) is not None:
                widget.hide()  # out of the layout until it is deleted
                widget.deleteLater()
        self.bars = {}
        for row, (name, trials) in enumerate(settings):
            bar = QProgressBar()
            bar.setRange(0, trials)
            bar.setValue(0)
            bar.setFormat(f"{name}: %v of %m")
            bar.setAccessibleName(f"Progress of {name}")
            self._bars_box.addWidget(QLabel(name), row, 0)
            self._bars_box.addWidget(bar, row, 1)
            self.bars[name] = bar
        self.runs.setRowCount(0)
        self.show_summaries([])
        self.footer.setText("")

    def add_run(self, result: TrialResult) -> None:
        """A finished run: a row of the runs table, a step of its setting's bar."""
        row = self.runs.rowCount()
        self.runs.insertRow(row)
        cells = (
            result.setting, result.task_id, f"{result.score:.2f}", fmt.status_text(result.status),
            fmt.cost(result.cost_usd, result.unpriced), fmt.seconds(result.wall_s),
            result.session_id or "",
        )  # fmt: skip
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setData(SESSION_ROLE, result.session_id or "")
            self.runs.setItem(row, column, item)
        bar = self.bars.get(result.setting)
        if bar is not None:
            bar.setValue(bar.value() + 1)

    def show_summaries(self, summaries: Sequence[SettingSummary]) -> None:
        """Fill the results table and draw the plot from one row per setting."""
        self.summary.setRowCount(0)
        for cells in table_rows(summaries):
            row = self.summary.rowCount()
            self.summary.insertRow(row)
            for column, text in enumerate(cells):
                self.summary.setItem(row, column, QTableWidgetItem(text))
        self.plot.show_summaries(summaries)

    def _open_row(self, row: int, _column: int) -> None:
        item = self.runs.item(row, 0)
        session_id = item.data(SESSION_ROLE) if item is not None else ""
        if session_id:
            self.open_session.emit(str(session_id))
