"""The evaluation page: the form, a progress bar per setting with the spend against the budget
and an ETA, the runs as they finish (double-click opens one in the main view), the results
table and the score-against-cost plot. Everything it shows is computed by `evaluation`."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.evaluation.report import HEADERS, conclude, table_rows
from rlm_desktop.evaluation.runner import EvaluationEvent, TrialFinished, TrialSkipped
from rlm_desktop.evaluation.summary import summarize_all
from rlm_desktop.evaluation.trial import TrialResult
from rlm_desktop.ui.evaluation.form import FIELD_NAMES, EvaluationForm
from rlm_desktop.ui.evaluation.plot import ScoreCostPlot
from rlm_desktop.ui.shared.widgets import plain_label, resize_within_screen

if TYPE_CHECKING:
    from rlm_desktop.evaluation.options import EvaluationOptions
    from rlm_desktop.evaluation.runner import Evaluation
    from rlm_desktop.evaluation.settings import Setting
    from rlm_desktop.evaluation.task_sets import TaskSpec
    from rlm_desktop.store import Store

RUN_COLUMNS = ("setting", "task", "score", "status", "cost", "wall", "session")
SESSION_ROLE = Qt.ItemDataRole.UserRole


class EvaluationDialog(QDialog):
    """Runs evaluations; `open_session(id, "")` asks the window to open a run."""

    open_session = Signal(str, str)
    finished_evaluation = Signal(str)
    """Emitted with the evaluation's id when it ends (done, stopped or failed)."""

    def __init__(
        self,
        store: Store,
        model: str,
        api_base: str | None = None,
        prices_text: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.evaluation: Evaluation | None = None
        self.task: asyncio.Task[None] | None = None
        self._started = 0.0
        self._finished_now = 0
        self._closed = False
        self.setWindowTitle("Evaluation")
        self.setAccessibleName("Evaluation")
        self.form = EvaluationForm(model, api_base, prices_text)
        self.start_button = QPushButton("&Start")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("S&top")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.message = plain_label()
        self.message.setWordWrap(True)
        self.spend = QLabel()
        self.eta = QLabel()
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
        self._layout()

    def _layout(self) -> None:
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.spend, 1)
        buttons.addWidget(self.eta)
        summary_page = QWidget()
        summary_layout = QVBoxLayout(summary_page)
        summary_layout.addWidget(self.summary, 1)
        summary_layout.addWidget(self.footer)
        tabs = self.tabs = QTabWidget()
        tabs.addTab(self.runs, "Runs (double-click to open)")
        tabs.addTab(summary_page, "Results")
        tabs.addTab(self.plot, "Score vs cost")
        layout = QVBoxLayout(self)
        layout.addWidget(self.form)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addLayout(self._bars_box)
        layout.addWidget(tabs, 1)
        resize_within_screen(self, 900, 780)

    @property
    def running(self) -> bool:
        """True while an evaluation runs."""
        return self.task is not None and not self.task.done()

    def start(self) -> bool:
        """Start a new evaluation from the form (after the pre-flight check of its models, server
        and keys), or resume the stopped one; False (with the reason shown) when the form is wrong.
        True means it has begun: a problem the check finds is shown and nothing is recorded."""
        if self.running:
            return False
        if self.evaluation is not None and self.evaluation.cancelled:
            self.task = asyncio.ensure_future(self._run(self._prepare(self.evaluation)))
            return True
        try:
            spec, settings, options = self.form.evaluation_input()
        except ConfigError as error:
            self.message.setText(error.worded(FIELD_NAMES))
            return False
        self._busy(True)
        self.message.setText("Checking the models, the server and the keys…")
        self.task = asyncio.ensure_future(self._check_then_run(spec, settings, options))
        return True

    async def _check_then_run(
        self, spec: TaskSpec, settings: list[Setting], options: EvaluationOptions
    ) -> None:
        from rlm_desktop.commands.eval import preflight_line
        from rlm_desktop.commands.run import credentials_for
        from rlm_desktop.evaluation.opening import create_evaluation, preflight_settings

        try:
            problems = await preflight_settings(settings, options, credentials_for)
            if problems:
                self.message.setText(f"Not started: {preflight_line(problems[0])}.")
                self._busy(False)
                return
            evaluation = create_evaluation(
                self.store, spec, settings, options, folders=paths.engine_folders(),
                credentials=credentials_for,
            )  # fmt: skip
        except ConfigError as error:
            self.message.setText(error.worded(FIELD_NAMES))
            self._busy(False)
            return
        await self._run(self._prepare(evaluation))

    def _busy(self, busy: bool) -> None:
        self.start_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        self.form.setEnabled(not busy)

    def _prepare(self, evaluation: Evaluation) -> Evaluation:
        """Show `evaluation` (new or resumed) on the page, about to run."""
        if evaluation is not self.evaluation:
            evaluation.add_listener(self._on_event)
        self.evaluation = evaluation
        self._show_bars(evaluation)
        self.message.setText(f"Evaluation {evaluation.evaluation_id}")
        self._started, self._finished_now = time.monotonic(), 0
        self._busy(True)
        return evaluation

    def stop(self) -> None:
        """Stop the evaluation; Start resumes it."""
        if self.evaluation is not None and self.running:
            self.evaluation.cancel()

    async def _run(self, evaluation: Evaluation) -> None:
        try:
            await evaluation.run()
        except Exception as error:  # a database or engine failure: say it, keep the page usable
            self.message.setText(f"The evaluation stopped: {error}")
        finally:
            self._ended(evaluation)

    def _ended(self, evaluation: Evaluation) -> None:
        if self._closed:  # the page is gone; the runs that finished are saved
            return
        self.stop_button.setEnabled(False)
        self.start_button.setEnabled(True)
        self.start_button.setText("&Resume" if evaluation.cancelled else "&Start")
        self.form.setEnabled(not evaluation.cancelled)
        out = paths.data_dir() / "evaluations" / evaluation.evaluation_id
        _table, summary = conclude(evaluation, out)
        self.footer.setText("\n".join([*summary["notes"], f"Results written to {out}"]))
        if evaluation.cancelled:
            self.message.setText("Stopped: Resume runs what is left.")
        elif evaluation.skipped:
            self.message.setText(
                f"{fmt.plural(len(evaluation.skipped), 'run')} not started: the total budget is spent."
            )
        else:
            self.message.setText(f"Evaluation {evaluation.evaluation_id} is complete.")
        if not evaluation.cancelled:
            self.evaluation = None
        self.finished_evaluation.emit(evaluation.evaluation_id)

    def _show_bars(self, evaluation: Evaluation) -> None:
        while self._bars_box.count():
            item = self._bars_box.takeAt(0)
            if item is not None and (widget := item.widget()) is not None:
                widget.deleteLater()
        self.bars = {}
        self.runs.setRowCount(0)
        for row, setting in enumerate(evaluation.settings):
            bar = QProgressBar()
            bar.setRange(0, len(evaluation.tasks))
            bar.setValue(0)
            bar.setFormat(f"{setting.name}: %v of %m")
            bar.setAccessibleName(f"Progress of {setting.name}")
            self._bars_box.addWidget(QLabel(setting.name), row, 0)
            self._bars_box.addWidget(bar, row, 1)
            self.bars[setting.name] = bar
        for result in evaluation.results():
            self._add_run(result)
        self._refresh(evaluation)

    def _on_event(self, event: EvaluationEvent) -> None:
        evaluation = self.evaluation
        if evaluation is None or self._closed:
            return
        if isinstance(event, TrialFinished):
            self._finished_now += 1
            self._add_run(event.result)
            self._refresh(evaluation)
        elif isinstance(event, TrialSkipped):
            self.message.setText(f"Not started: {event.setting} on {event.task_id}: {event.reason}")

    def _add_run(self, result: TrialResult) -> None:
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

    def _refresh(self, evaluation: Evaluation) -> None:
        results = evaluation.results()
        summaries = summarize_all([s.name for s in evaluation.settings], results)
        self.summary.setRowCount(0)
        for cells in table_rows(summaries):
            row = self.summary.rowCount()
            self.summary.insertRow(row)
            for column, text in enumerate(cells):
                self.summary.setItem(row, column, QTableWidgetItem(text))
        self.plot.show_summaries(summaries)
        cap = evaluation.options.max_cost_usd
        spent = evaluation.allowance.spent_usd
        self.spend.setText(
            f"Spent {fmt.dollars(spent)}" + (f" of {fmt.dollars(cap)}" if cap else "")
        )
        left = len(evaluation.settings) * len(evaluation.tasks) - len(results)
        if self._finished_now and left:
            per_run = (time.monotonic() - self._started) / self._finished_now
            self.eta.setText(f"about {fmt.seconds(per_run * left)} left")
        else:
            self.eta.setText("")

    def _open_row(self, row: int, _column: int) -> None:
        item = self.runs.item(row, 0)
        session_id = item.data(SESSION_ROLE) if item is not None else ""
        if session_id:
            self.open_session.emit(str(session_id), "")

    def done(self, result: int) -> None:
        """Closing the page stops a running evaluation (it can be resumed from the command
        line: `rlm-desktop eval --resume ID`)."""
        self._closed = True
        self.stop()
        super().done(result)
