"""The detail pane beside the call tree: one tab at a time gets the run area's whole height.

*Answer* (the run's answer, its sources, then its figures), *Console* (the selected call's turns:
the code the model wrote and what it printed), *Call* (the selected call's figures, prompt,
reply, error and every message sent), *Health* (the failure modes found and each document's
coverage) and *Timeline*. Which tab shows follows what the user does (`docs/layout.md`): a run
starting shows the console, a run ending its answer, a call chosen from the answer or the
findings its console; on *Call* and *Timeline* the user is comparing calls, and stays.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from rlm_desktop.ui.console.view import ConsoleView
from rlm_desktop.ui.review.health_panel import HealthPanel
from rlm_desktop.ui.run.answer_panel import AnswerPanel
from rlm_desktop.ui.timeline.pane import TimelinePane
from rlm_desktop.ui.tree.details import DetailPanel

ANSWER, CONSOLE, CALL, HEALTH, TIMELINE = range(5)
TAB_NAMES = ("Answer", "Console", "Call", "Health", "Timeline")
STAYS_ON_CHOICE = (CALL, TIMELINE)
"""Tabs that keep showing when another call is chosen: they show any call, or all of them."""
WAITING = {
    ANSWER: "The answer shows here when the run ends.",
    HEALTH: "The run's health is checked when it ends: the known failure modes, and how much "
    "of each document reached a model.",
}


class WithPlaceholder(QWidget):
    """`content`, or a line saying what will show there while `content` is hidden."""

    def __init__(self, content: QWidget, waiting: str) -> None:
        super().__init__()
        self.content = content
        self.placeholder = QLabel(waiting)
        self.placeholder.setObjectName("muted")
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.placeholder)
        layout.addWidget(content, 1)
        self.placeholder.setVisible(content.isHidden())
        content.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """Show the placeholder while the content is hidden (a new run, nothing yet)."""
        if watched is self.content and event.type() in (
            QEvent.Type.ShowToParent,
            QEvent.Type.HideToParent,
        ):
            self.placeholder.setVisible(event.type() == QEvent.Type.HideToParent)
        return False


class DetailTabs(QTabWidget):
    """The five tabs over the parts given. `timeline_shown(bool)` fires when the Timeline tab
    comes into view or leaves it (the View menu's check mark follows)."""

    timeline_shown = Signal(bool)

    def __init__(
        self,
        answer: AnswerPanel,
        console: ConsoleView,
        details: DetailPanel,
        health: HealthPanel,
        timeline: TimelinePane,
    ) -> None:
        super().__init__()
        self.setObjectName("detailTabs")
        self.setAccessibleName("Run details")
        self.setDocumentMode(True)
        self.answer_page = WithPlaceholder(answer, WAITING[ANSWER])
        self.health_page = WithPlaceholder(health, WAITING[HEALTH])
        pages = (self.answer_page, console, details, self.health_page, timeline)
        for page, name in zip(pages, TAB_NAMES, strict=True):
            self.addTab(page, name)
        self.setTabToolTip(ANSWER, "The run's answer, its sources and its figures (Ctrl+1)")
        self.setTabToolTip(CONSOLE, "The chosen call's code and what it printed (Ctrl+2)")
        self.setTabToolTip(CALL, "The chosen call's prompt, reply, error and messages (Ctrl+3)")
        self.setTabToolTip(HEALTH, "Failure modes found, and each document's coverage (Ctrl+4)")
        self.setTabToolTip(TIMELINE, "When each call ran, and for how long (Ctrl+5, Ctrl+T)")
        self._before_timeline = CONSOLE
        self._last = CONSOLE
        self.currentChanged.connect(self._changed)
        self.setCurrentIndex(CONSOLE)

    def _changed(self, index: int) -> None:
        if (index == TIMELINE) != (self._last == TIMELINE):
            if index == TIMELINE:
                self._before_timeline = self._last
            self.timeline_shown.emit(index == TIMELINE)
        self._last = index

    def show_tab(self, index: int) -> None:
        """Bring tab `index` into view."""
        self.setCurrentIndex(index)

    def call_chosen(self) -> None:
        """A call was chosen in the tree or a finding: its console, unless the tab in view
        shows any call already."""
        if self.currentIndex() not in STAYS_ON_CHOICE:
            self.setCurrentIndex(CONSOLE)

    def toggle_timeline(self) -> None:
        """The Timeline tab, or back to the tab it was opened from."""
        if self.currentIndex() == TIMELINE:
            self.setCurrentIndex(self._before_timeline)
        else:
            self.setCurrentIndex(TIMELINE)

    def mark_health(self, warnings: int) -> None:
        """Say on the Health tab how many warnings the check found."""
        self.setTabText(HEALTH, f"Health ⚠ {warnings}" if warnings else TAB_NAMES[HEALTH])
