"""The evaluation page: the form, the spend against the budget and an ETA, and the results
(`results`: a progress bar per setting, the runs as they finish, the results table and the
score-against-cost plot). Everything it shows is computed by `evaluation`.

The form's fields are remembered (`memory`) for the next page and the next start; beside it,
the past evaluations (`past`): choosing one shows its runs, table and chart as after a run,
read from the store, and a partial one can be resumed. Starting (`starting`) checks the
settings and, when the form says so, joins a Ray cluster (`cluster`) off the GUI thread."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.evaluation.form_fields import default_fields
from rlm_desktop.evaluation.history import EvaluationView, past_evaluations, reopen_view
from rlm_desktop.evaluation.report import conclude
from rlm_desktop.evaluation.runner import (
    EvaluationEvent,
    TrialFinished,
    TrialPlaced,
    TrialSkipped,
)
from rlm_desktop.evaluation.summary import summarize_all
from rlm_desktop.ui.evaluation.cluster import ClusterLink
from rlm_desktop.ui.evaluation.form import FIELD_NAMES, EvaluationForm
from rlm_desktop.ui.evaluation.memory import remember_fields, remembered_fields
from rlm_desktop.ui.evaluation.past import PastEvaluations, when
from rlm_desktop.ui.evaluation.results import EvaluationResults
from rlm_desktop.ui.evaluation.starting import NotStarted, open_new, open_partial
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.shared.widgets import plain_label, resize_within_screen, when_settled

if TYPE_CHECKING:
    from rlm_desktop.evaluation.runner import Evaluation
    from rlm_desktop.store import Store

REMEMBER_AFTER_MS = 500
"""How long the form must be left alone before its fields are written to the preferences."""
PAST_WIDTH = 280


class EvaluationDialog(QDialog):
    """Runs evaluations and shows past ones; `open_session(id, "")` asks the window to open a
    run. `prefs` keeps the form's fields (the app's settings file unless given)."""

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
        prefs: Preferences | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.prefs = prefs or Preferences()
        self.evaluation: Evaluation | None = None
        self.shown: EvaluationView | None = None
        """The past evaluation on the page, when one was chosen from the list."""
        self._live: str | None = None
        """The id of the evaluation running on this page."""
        self.task: asyncio.Task[None] | None = None
        self.cluster = ClusterLink()
        """The Ray cluster the page's trials run on, while one is joined."""
        self._leaving: asyncio.Future[None] | None = None
        self._started = 0.0
        self._finished_now = 0
        self._closed = False
        self.setWindowTitle("Evaluation")
        self.setAccessibleName("Evaluation")
        defaults = default_fields(model, api_base, prices_text)
        self.form = EvaluationForm(
            model, api_base, prices_text, remembered_fields(self.prefs, defaults)
        )
        self._remember = when_settled(
            self.form.changed, REMEMBER_AFTER_MS, self.remember_fields, self
        )
        self.start_button = QPushButton("&Start")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("S&top")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.new_button = QPushButton("&New evaluation")
        self.new_button.setToolTip("Clear the page for a new evaluation from the form")
        self.new_button.clicked.connect(self.new_evaluation)
        self.message = plain_label()
        self.message.setWordWrap(True)
        self.spend = QLabel()
        self.eta = QLabel()
        self.results = EvaluationResults()
        self.results.open_session.connect(lambda session_id: self.open_session.emit(session_id, ""))
        self.runs = self.results.runs
        self.summary = self.results.summary
        self.plot = self.results.plot
        self.footer = self.results.footer
        self.tabs = self.results.tabs
        self.past = PastEvaluations()
        self.past.chosen.connect(self.show_past)
        self._layout()
        self.refresh_past()

    def _layout(self) -> None:
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.spend, 1)
        buttons.addWidget(self.eta)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.form)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(self.results, 1)
        split = self.splitter = QSplitter(Qt.Orientation.Horizontal)
        split.setObjectName("evaluationSplitter")
        split.addWidget(self.past)
        split.addWidget(page)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        split.setSizes([PAST_WIDTH, 900])
        QVBoxLayout(self).addWidget(split)
        resize_within_screen(self, 900 + PAST_WIDTH, 780)

    def remember_fields(self) -> None:
        """Keep the form's fields for the next page and the next start."""
        self._remember.stop()
        remember_fields(self.prefs, self.form.fields())

    def refresh_past(self) -> None:
        """List the past evaluations again (the one running here as running), keeping the
        one on the page selected."""
        entries = past_evaluations(self.store)
        live = self._live
        entries = [dataclasses.replace(p, state="running") if p.id == live else p for p in entries]
        current = live or (self.evaluation.evaluation_id if self.evaluation else None)
        self.past.refresh(entries, current or (self.shown.past.id if self.shown else None))

    @property
    def bars(self) -> dict[str, QProgressBar]:
        """The progress bar of each setting on the page."""
        return self.results.bars

    @property
    def running(self) -> bool:
        """True while an evaluation runs."""
        return self.task is not None and not self.task.done()

    def start(self) -> bool:
        """Start a new evaluation from the form (after the pre-flight check of its models, server
        and keys, and joining the Ray cluster when it runs on one), or resume the stopped one;
        False (with the reason shown) when the form is wrong. True means it has begun: a problem
        found on the way is shown and nothing is recorded."""
        if self.running:
            return False
        if self.evaluation is not None and self.evaluation.cancelled:
            self.task = asyncio.ensure_future(self._run(self._prepare(self.evaluation)))
            return True
        self.remember_fields()
        try:
            address = self.form.ray_address()
            if (shown := self._resumable()) is not None:
                opening = partial(
                    open_partial, self.store, shown.past.id, cluster=self.cluster,
                    address=address, say=self.say,
                )  # fmt: skip
            else:
                spec, settings, options = self.form.evaluation_input()
                self.message.setText("Checking the models, the server and the keys…")
                opening = partial(
                    open_new, self.store, spec, settings, options, cluster=self.cluster,
                    address=address, say=self.say,
                )  # fmt: skip
        except ConfigError as error:
            self.message.setText(error.worded(FIELD_NAMES))
            return False
        self._busy(True)
        self.task = asyncio.ensure_future(self._open_then_run(opening))
        return True

    def say(self, line: str) -> None:
        """Show one line of what the page is doing."""
        if not self._closed:
            self.message.setText(line)

    async def _open_then_run(self, opening: Callable[[], Awaitable[Evaluation]]) -> None:
        try:
            evaluation = await opening()
        except NotStarted as failure:
            self._not_started(str(failure))
            return
        except asyncio.CancelledError:  # stopped (or the page closed) on the way
            await self.cluster.leave()
            raise
        if self._closed:
            await self.cluster.leave()
            return
        await self._run(self._prepare(evaluation))

    def _not_started(self, why: str) -> None:
        self.say(why)
        if not self._closed:
            self._busy(False)

    def _resumable(self) -> EvaluationView | None:
        """The past evaluation on the page when it is partial and no process is running it."""
        shown = self.shown
        return shown if shown is not None and shown.past.state == "partial" else None

    def _busy(self, busy: bool) -> None:
        self.start_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        self.new_button.setEnabled(not busy)
        self.past.setEnabled(not busy)
        self.form.setEnabled(not busy)

    def _prepare(self, evaluation: Evaluation) -> Evaluation:
        """Show `evaluation` (new or resumed) on the page, about to run."""
        if evaluation is not self.evaluation:
            evaluation.add_listener(self._on_event)
        self.evaluation, self.shown = evaluation, None
        self.results.clear([(s.name, len(evaluation.tasks)) for s in evaluation.settings])
        for result in evaluation.results():
            self.results.add_run(result)
        self._refresh(evaluation)
        where = f" on the {self.cluster.description}" if self.cluster.joined else ""
        self.message.setText(f"Evaluation {evaluation.evaluation_id}{where}")
        self._started, self._finished_now = time.monotonic(), 0
        self._busy(True)
        self._live = evaluation.evaluation_id
        self.refresh_past()
        return evaluation

    def stop(self) -> None:
        """Stop the evaluation (Start resumes it), or the start of one still being checked or
        joining its cluster."""
        if not self.running:
            return
        if self.evaluation is not None:
            self.evaluation.cancel()
        elif self.task is not None:
            self.task.cancel()
            self._not_started("Stopped before it started: nothing was recorded.")

    async def _run(self, evaluation: Evaluation) -> None:
        try:
            await evaluation.run()
        except Exception as error:  # a database or engine failure: say it, keep the page usable
            self.message.setText(f"The evaluation stopped: {error}")
        finally:
            self._ended(evaluation)
            if self._closed or not evaluation.cancelled:  # a stopped one resumes where it ran
                await self.cluster.leave()

    def _ended(self, evaluation: Evaluation) -> None:
        self._live = None
        if self._closed:  # the page is gone; the runs that finished are saved
            return
        self._busy(False)
        self.start_button.setText("&Resume" if evaluation.cancelled else "&Start")
        self.form.setEnabled(not evaluation.cancelled)
        out = paths.results_folder("evaluation", evaluation.evaluation_id)
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
        self.refresh_past()
        self.past.select(evaluation.evaluation_id)
        if not evaluation.cancelled:
            self.evaluation = None
        self.finished_evaluation.emit(evaluation.evaluation_id)

    def _on_event(self, event: EvaluationEvent) -> None:
        evaluation = self.evaluation
        if evaluation is None or self._closed:
            return
        if isinstance(event, TrialFinished):
            self._finished_now += 1
            self.results.add_run(event.result)
            self._refresh(evaluation)
            self.refresh_past()
        elif isinstance(event, TrialPlaced):
            where = fmt.placement(event.ran_on.executor, event.ran_on.label(), event.ran_on.attempt)
            self.results.placed(event.setting, event.task_id, where)
        elif isinstance(event, TrialSkipped):
            self.message.setText(f"Not started: {event.setting} on {event.task_id}: {event.reason}")

    def _show_spend(self, spent: float, cap: float | None) -> None:
        self.spend.setText(
            f"Spent {fmt.dollars(spent)}" + (f" of {fmt.dollars(cap)}" if cap else "")
        )

    def _refresh(self, evaluation: Evaluation) -> None:
        results = evaluation.results()
        summaries = summarize_all([s.name for s in evaluation.settings], results)
        self.results.show_summaries(summaries)
        self._show_spend(evaluation.allowance.spent_usd, evaluation.options.max_cost_usd)
        left = len(evaluation.settings) * len(evaluation.tasks) - len(results)
        if self._finished_now and left:
            per_run = (time.monotonic() - self._started) / self._finished_now
            self.eta.setText(f"about {fmt.seconds(per_run * left)} left")
        else:
            self.eta.setText("")

    def show_past(self, evaluation_id: str) -> bool:
        """Show the stored evaluation `evaluation_id` as after a run (its runs, table, chart and
        footer), read from the store; False (and nothing changes) when it cannot be read or an
        evaluation is running here."""
        if self.running:
            return False
        view = reopen_view(self.store, evaluation_id)
        if view is None:
            self.message.setText(f"Evaluation {evaluation_id} cannot be read from the store.")
            return False
        self.evaluation, self.shown = None, view
        per_setting = view.tasks_per_setting
        self.results.clear(
            [
                (name, sum(1 for r in view.results if r.setting == name))
                if per_setting is None
                else (name, per_setting)
                for name in view.setting_names
            ]
        )
        for result in view.results:
            self.results.add_run(result)
        self.results.show_summaries(view.summaries)
        self.footer.setText("\n".join(view.footer))
        self._show_spend(view.spent_usd, view.max_cost_usd)
        self.eta.setText("")
        past = view.past
        line = f"Evaluation {past.id} · {when(past.created_at)} · {past.state}: {past.trials}"
        if past.state == "partial":
            line += ". Resume runs what is left."
        elif past.state == "running":
            line += " (another process is running it)."
        self.message.setText(line)
        self.start_button.setText("&Resume" if past.state == "partial" else "&Start")
        self.form.setEnabled(past.state != "partial")
        self.past.select(evaluation_id)
        return True

    def new_evaluation(self) -> None:
        """Clear the page (a stopped or a past evaluation stays listed) for a new evaluation
        from the form."""
        if self.running:
            return
        self.evaluation, self.shown = None, None
        self.results.clear()
        for label in (self.spend, self.eta, self.message):
            label.setText("")
        self.start_button.setText("&Start")
        self.form.setEnabled(True)
        self.past.select(None)
        self._let_cluster_go()

    def _let_cluster_go(self) -> None:
        """Leave the cluster a stopped evaluation held for its resume."""
        if self.cluster.joined and not self.running:
            self._leaving = asyncio.ensure_future(self.cluster.leave())

    def done(self, result: int) -> None:
        """Closing the page stops a running evaluation (it can be resumed from the command
        line: `rlm-desktop eval --resume ID`) and leaves the Ray cluster it ran on."""
        self._closed = True
        self.remember_fields()
        self.stop()
        self._let_cluster_go()
        super().done(result)
