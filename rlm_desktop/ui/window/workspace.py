"""The working area, laid out around the run (`docs/layout.md`): documents on the left, the
question and run settings on top, then the call tree beside the detail pane, whose tabs (answer,
console, call, health, timeline) each get the run area's whole height; the replay bar above them
for a saved session.

Every run in view, live or saved, reaches these widgets the same way: event batches from the
`EventBridge` folded into the `CallTreeModel`, then the selected call's console and details are
brought up to date. While a run streams in, the details and the run's figures (`run_changed`:
status bar, timeline) follow at most every `FIGURES_MS`; they catch up at once when it ends.

The run's health check, once done, gives the answer card its checked sources; a source chosen
there opens in the documents preview. A saved session replayed from its start gets them back
when its answer shows again.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QSplitter, QVBoxLayout, QWidget

from rlm_desktop.engine.events import Event
from rlm_desktop.review.call_tree import CallNode, Changes
from rlm_desktop.ui.bridge.events import EventBridge
from rlm_desktop.ui.console.view import ConsoleView
from rlm_desktop.ui.documents.pane import DocumentsPane
from rlm_desktop.ui.replay.controller import ReplayController
from rlm_desktop.ui.review.health_panel import HealthPanel
from rlm_desktop.ui.run.answer_panel import AnswerPanel
from rlm_desktop.ui.run.controls import RunControls
from rlm_desktop.ui.sessions.conversations import ConversationsPane
from rlm_desktop.ui.shared.pacer import Pacer
from rlm_desktop.ui.shared.widgets import ElidedLabel, splitter
from rlm_desktop.ui.timeline.pane import TimelinePane
from rlm_desktop.ui.tree.details import DetailPanel
from rlm_desktop.ui.tree.model import CallTreeModel
from rlm_desktop.ui.tree.panel import TreePanel
from rlm_desktop.ui.window.detail_tabs import ANSWER, CONSOLE, DetailTabs

if TYPE_CHECKING:
    from rlm_desktop.review.health import HealthReport
    from rlm_desktop.ui.run.sources_list import ChosenPassage

TICK_MS = 500
FIGURES_MS = 200


class Workspace(QWidget):
    """All panes of a run. `run_changed` fires after each batch that changed run-level facts."""

    run_changed = Signal()
    leave_review = Signal()
    documents_wanted = Signal()
    """A passage was opened in the documents preview while the pane is shut: the window's
    Documents action opens it (so that the action's check mark stays true)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = EventBridge(self)
        self.model = CallTreeModel(self)
        self.documents = DocumentsPane()
        self.controls = RunControls()
        self.tree_panel = TreePanel(self.model)
        self.details = DetailPanel()
        self.console = ConsoleView()
        self.answer = AnswerPanel()
        self.details.clock = lambda: self.model.tree.run.now()
        self.details.run_elapsed = lambda: self.model.tree.run.elapsed()
        self.review_label = ElidedLabel()
        self.review_label.setObjectName("banner")
        self.review_label.setAccessibleName("Review banner")
        self.new_run_button = QPushButton("Back to a new run")
        self.new_run_button.clicked.connect(self.leave_review)
        self.review_bar = QWidget()
        review_layout = QHBoxLayout(self.review_bar)
        review_layout.setContentsMargins(0, 0, 0, 0)
        review_layout.addWidget(self.review_label, 1)
        review_layout.addWidget(self.new_run_button)
        self.review_bar.hide()
        self.reviewing: str | None = None
        self._review_details = ""
        """What the session under review left out, shown with the banner."""

        self.health = HealthPanel()
        self.health.title.hide()  # its tab names it
        self.timeline = TimelinePane(self.model)
        self.timeline.title.hide()
        self.detail_tabs = DetailTabs(
            self.answer, self.console, self.details, self.health, self.timeline
        )
        self.run_splitter = splitter(
            Qt.Orientation.Horizontal,
            "callSplitter",
            [(self.tree_panel, 2), (self.detail_tabs, 3)],
        )
        self.run_splitter.setChildrenCollapsible(False)
        self.replay = ReplayController(self)

        center = QWidget()
        center_layout = QVBoxLayout(center)
        center_layout.setContentsMargins(0, 0, 0, 0)
        center_layout.addWidget(self.review_bar)
        center_layout.addWidget(self.replay.bar)
        center_layout.addWidget(self.controls)
        center_layout.addWidget(self.run_splitter, 1)

        self.main_splitter = splitter(
            Qt.Orientation.Horizontal, "mainSplitter", [(self.documents, 1), (center, 4)]
        )
        self.main_splitter.setSizes([300, 1140])
        self.run_splitter.setSizes([440, 700])
        self.conversations = ConversationsPane()
        self.conversations.hide()
        self.outer_splitter = splitter(
            Qt.Orientation.Horizontal,
            "conversationsSplitter",
            [(self.conversations, 0), (self.main_splitter, 1)],
        )
        self.outer_splitter.setChildrenCollapsible(False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.addWidget(self.outer_splitter)

        self.bridge.batch.connect(self.apply_events)
        self.tree_panel.call_selected.connect(self._select)
        self.tree_panel.call_selected.connect(self.timeline.highlight)
        self.timeline.call_clicked.connect(self.tree_panel.select)
        self.run_changed.connect(self.timeline.schedule)
        self.tree_panel.error_reached.connect(self.console.reveal_error)
        self.health.call_chosen.connect(self._choose_call)
        self.health.reported.connect(self._on_report)
        self.tree_panel.view.clicked.connect(lambda _index: self.detail_tabs.call_chosen())
        self.tree_panel.view.activated.connect(lambda _index: self.detail_tabs.call_chosen())
        self.checked: HealthReport | None = None
        """The last health report: its sources go on the answer card of its run."""
        self.answer.source_chosen.connect(self._show_passage)
        self._details_pacer = Pacer(self.details.refresh, FIGURES_MS, self)
        self._figures_pacer = Pacer(self.run_changed.emit, FIGURES_MS, self)
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._on_tick)

    def documents_shown(self) -> bool:
        """True unless the documents pane is dragged shut (or hidden)."""
        return not self.documents.isHidden() and self.main_splitter.sizes()[0] > 0

    def show_documents(self, shown: bool) -> None:
        """Open the documents pane to a quarter of the width (at least its least), or shut it
        (hidden, so the window's least width is the run's alone)."""
        total = sum(self.main_splitter.sizes())
        if not shown:
            self.main_splitter.setSizes([0, total])
            self.documents.hide()  # hidden too: a folded pane's least width would still count
        elif not self.documents_shown():
            self.documents.show()
            width = min(total // 2, max(self.documents.minimumSizeHint().width(), total // 4))
            self.main_splitter.setSizes([width, total - width])

    def splitters(self) -> list[QSplitter]:
        """The splitters whose positions are remembered."""
        return [
            self.outer_splitter,
            self.main_splitter,
            self.run_splitter,
            self.documents.splitter,
        ]

    def begin_view(self, review: str | None = None) -> None:
        """Clear the tree, console and answer for a new run, or to review a saved one. The
        same saved session replayed from its start keeps its health (a check still running
        when the replay restarts would be dropped: its sources never came back)."""
        replaying = review is not None and review == self.reviewing
        self.bridge.flush()
        self._details_pacer.cancel()
        self._figures_pacer.cancel()
        self.model.reset()
        self.tree_panel.clear_filter()
        self.console.show_call(None)
        self.details.show_call(None)
        self.answer.clear()
        if not replaying:
            self.health.clear()
        self.documents.clear_passage()
        if review != self.reviewing:
            self._review_details = ""  # another session's
        self.reviewing = review
        self.review_bar.setVisible(review is not None)
        self.controls.setVisible(review is None)
        self.detail_tabs.show_tab(CONSOLE)
        if review is not None:
            self._show_review_banner()
            self._tick.stop()
        else:
            self._tick.start()

    def set_review_details(self, details: str) -> None:
        """Add `details` (what an imported file left out) to the review banner: a mark on it,
        the lines in its tooltip, kept while the same session is under review."""
        self._review_details = details
        self._show_review_banner()

    def _show_review_banner(self) -> None:
        details, banner = self._review_details, self.reviewing or ""
        self.review_label.setText(
            banner + (" · ▸ what the file left out (hover)" if details else "")
        )
        tip = banner + (f"\n\n{details}" if details else "")
        # Rich text, escaped: a file's name or its lines must never be read as markup.
        self.review_label.setToolTip(f"<p style='white-space:pre-wrap'>{escape(tip)}</p>")

    def apply_events(self, events: Sequence[Event]) -> Changes:
        """Fold a batch of events into the tree and bring the views up to date."""
        changes = self.model.apply_events(events)
        run = self.model.tree.run
        ended = run.finished is not None or run.closed
        selected = self.console.node
        if selected is not None and selected in changes.turns:
            self.console.refresh()
        if self.details.node is not None and self.details.node in changes.updated:
            self._pace(self._details_pacer, ended)
        if changes.run:
            limit = self.model.tree.run.settings.get("output_limit_chars")
            if isinstance(limit, int) and limit > 0:
                self.console.limit = limit
        finished = self.model.tree.run.finished
        if finished is not None and changes.run and self.answer.isHidden():
            retries = sum(node.retries for node in self.model.tree.walk())
            self.answer.show_result(finished, retries)
            self.detail_tabs.show_tab(ANSWER)
            self._show_sources()
            self._tick.stop()
        if changes.run:
            self._pace(self._figures_pacer, ended)
        return changes

    @staticmethod
    def _pace(pacer: Pacer, now: bool) -> None:
        """Request `pacer`'s work; `now` (the run has ended) runs it without waiting."""
        if now:
            pacer.cancel()
        pacer.request()

    def _select(self, node: CallNode | None) -> None:
        self.console.show_call(node)
        self.details.show_call(node)

    def _choose_call(self, call_id: str, _turn: int) -> None:
        """Select the call a health finding points at (its console then shows its turns)."""
        node = self.model.tree.nodes.get(call_id)
        if node is not None:
            self.tree_panel.select(node)
            self.detail_tabs.call_chosen()

    def _on_report(self, report: HealthReport | None) -> None:
        """Show a report's coverage in the documents and its sources on the answer card (a
        cleared report keeps its sources, for its run's answer replayed)."""
        self.documents.show_coverage(None if report is None else report.coverage)
        self.detail_tabs.mark_health(0 if report is None else len(report.warnings))
        if report is not None:
            self.checked = report
            self._show_sources()

    def _show_sources(self) -> None:
        """The checked sources on the answer card, when it shows the run they were checked for."""
        report = self.checked
        if (
            report is not None
            and not self.answer.isHidden()
            and report.session_id == self.model.tree.run.run_id
        ):
            self.answer.show_sources(report.sources, report.read)

    def _show_passage(self, passage: ChosenPassage) -> None:
        """Open a source's passage in the documents preview (asking for the pane if it is shut)."""
        if not self.documents_shown():
            self.documents_wanted.emit()
        self.documents.show_passage(
            passage.document_index,
            passage.document,
            passage.start,
            passage.end,
            passage.caption,
            passage.approximate,
        )

    def _on_tick(self) -> None:
        if self.model.tree.run.finished is None:
            self.tree_panel.repaint_clocks()
            if self.details.node is not None and self.details.node.running:
                self.details.refresh()
            self.run_changed.emit()
