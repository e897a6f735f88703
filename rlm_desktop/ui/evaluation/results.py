"""What an evaluation has to show, live or reopened from the store: a progress bar per setting
with where its trials run (`placing`), the runs with the node each ran on (double-click opens
one in the main view), the results table with its footer, and the score-against-cost plot."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QHeaderView,
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
from rlm_desktop.ui.evaluation.placing import Placing
from rlm_desktop.ui.evaluation.plot import ScoreCostPlot
from rlm_desktop.ui.shared.widgets import ElidedLabel, plain_label

RUN_COLUMNS = ("setting", "task", "score", "status", "cost", "wall", "ran on", "session")
PLACE_COLUMN = RUN_COLUMNS.index("ran on")
PLACE_WIDTH = 220
"""The most the "ran on" column takes by itself (a cluster node's label is long)."""
SESSION_ROLE = Qt.ItemDataRole.UserRole
RETRIED_TIP = "Run a second time: the node it was first sent to died mid-trial."


def ran_on(result: TrialResult) -> str:
    """Where the trial ran; nothing for one that left no run (refused before it started)."""
    if not result.session_id:
        return ""
    return fmt.placement(result.executor, result.node, result.attempts)


class EvaluationResults(QWidget):
    """The bars and the three tabs; `open_session(id)` when a run is double-clicked."""

    open_session = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bars: dict[str, QProgressBar] = {}
        self.places: dict[str, ElidedLabel] = {}
        """Beside each bar: the trials running and where, or where the finished ones ran."""
        self.placing = Placing()
        self._bars_box = QGridLayout()
        self._bars_box.setColumnStretch(1, 1)
        self._bars_box.setColumnStretch(2, 1)
        self.runs = QTableWidget(0, len(RUN_COLUMNS))
        self.runs.setHorizontalHeaderLabels(RUN_COLUMNS)
        self.runs.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.runs.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.runs.cellDoubleClicked.connect(self._open_row)
        self.runs.setWordWrap(False)
        self.runs.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.runs.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(PLACE_COLUMN, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(len(RUN_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
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
        self.bars, self.places = {}, {}
        self.placing = Placing()
        for row, (name, trials) in enumerate(settings):
            bar = QProgressBar()
            bar.setRange(0, trials)
            bar.setValue(0)
            bar.setFormat(f"{name}: %v of %m")
            bar.setAccessibleName(f"Progress of {name}")
            self._bars_box.addWidget(QLabel(name), row, 0)
            self._bars_box.addWidget(bar, row, 1)
            self.bars[name] = bar
            place = self.places[name] = ElidedLabel()
            place.setObjectName("muted")
            place.setAccessibleName(f"Where {name} runs")
            self._bars_box.addWidget(place, row, 2)
        self.runs.setRowCount(0)
        self.show_summaries([])
        self.footer.setText("")

    def add_run(self, result: TrialResult) -> None:
        """A finished run: a row of the runs table, a step of its setting's bar."""
        row = self.runs.rowCount()
        self.runs.insertRow(row)
        where = ran_on(result)
        cells = (
            result.setting, result.task_id, f"{result.score:.2f}", fmt.status_text(result.status),
            fmt.cost(result.cost_usd, result.unpriced), fmt.seconds(result.wall_s),
            where, result.session_id or "",
        )  # fmt: skip
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setData(SESSION_ROLE, result.session_id or "")
            if column == PLACE_COLUMN and result.attempts > 1:
                item.setToolTip(RETRIED_TIP)
            self.runs.setItem(row, column, item)
        self.runs.resizeColumnToContents(PLACE_COLUMN)
        self.runs.setColumnWidth(
            PLACE_COLUMN, min(self.runs.columnWidth(PLACE_COLUMN), PLACE_WIDTH)
        )
        bar = self.bars.get(result.setting)
        if bar is not None:
            bar.setValue(bar.value() + 1)
        self.placing.finished(
            result.setting,
            result.task_id,
            fmt.placement(result.executor, result.node) if result.session_id else "",
            retried=result.attempts > 1,
        )
        self._show_place(result.setting)

    def placed(self, setting: str, task_id: str, where: str) -> None:
        """A trial of `setting` is under way at `where` (this machine, or a cluster's node)."""
        self.placing.placed(setting, task_id, where)
        self._show_place(setting)

    def _show_place(self, setting: str) -> None:
        label = self.places.get(setting)
        if label is not None:
            label.setText(self.placing.line(setting))

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
