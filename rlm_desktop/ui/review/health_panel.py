"""The Health panel: the known failure modes found in the run in view, each linked to its calls
and turns, and a bar per document for the share of it that reached a model."""

from __future__ import annotations

import asyncio
from pathlib import PurePath
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QProgressBar,
    QScrollArea,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop import formatting as fmt
from rlm_desktop.review.health.finding import KIND_TITLES, Finding, for_the_window, turn_name
from rlm_desktop.ui.shared.widgets import plain_label

if TYPE_CHECKING:
    from rlm_desktop.review.health import HealthReport
    from rlm_desktop.store import Store

TARGET = Qt.ItemDataRole.UserRole
BAR_STEPS = 1000
MARKS = {"warning": "⚠", "info": "ℹ"}
SHOWN_EVIDENCE = 50


BARS_SHOWN = 6
"""Coverage bars shown at once; more documents scroll."""


FINDING_ROWS_SHOWN = 6
"""Rows of findings the list asks for; it takes the room left when there is more."""


class FindingsTree(QTreeWidget):
    """The findings, asking for the height of their rows (up to `FINDING_ROWS_SHOWN`), not a
    fixed block: one finding takes one line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.itemExpanded.connect(self._rows_changed)
        self.itemCollapsed.connect(self._rows_changed)

    def _rows_changed(self, _item: QTreeWidgetItem) -> None:
        self.updateGeometry()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """The shown rows' height, framed."""
        heights: list[int] = []
        item = self.topLevelItem(0)
        while item is not None and len(heights) < FINDING_ROWS_SHOWN:
            heights.append(max(self.visualItemRect(item).height(), self.fontMetrics().height()))
            item = self.itemBelow(item)
        rows = sum(heights) or self.fontMetrics().height()
        return QSize(super().sizeHint().width(), rows + 2 * self.frameWidth() + 2)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """One line."""
        return QSize(super().minimumSizeHint().width(), self.fontMetrics().height() * 2)


class HealthPanel(QWidget):
    """Findings and coverage of one run. `call_chosen(call_id, turn)` fires when a piece of
    evidence is clicked (`turn` is -1 for a call as a whole)."""

    call_chosen = Signal(str, int)
    reported = Signal(object)
    """The `HealthReport` now shown, or None when cleared (the documents pane shows coverage)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Health")
        self.title = QLabel("Health")
        self.title.setObjectName("cardTitle")
        self.summary = plain_label()
        self.summary.setWordWrap(True)
        self.bars = QWidget()
        self._bars_layout = QVBoxLayout(self.bars)
        self._bars_layout.setContentsMargins(0, 0, 0, 0)
        self._bars_layout.setSpacing(2)
        # Many documents must not push the console off a small screen: the bars scroll.
        self.bars_area = QScrollArea()
        self.bars_area.setWidget(self.bars)
        self.bars_area.setWidgetResizable(True)
        self.bars_area.setFrameShape(QFrame.Shape.NoFrame)
        self.bars_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.findings = FindingsTree()
        self.findings.setHeaderHidden(True)
        self.findings.setWordWrap(True)
        self.findings.setAccessibleName("Findings")
        self.findings.itemClicked.connect(self._on_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.summary)
        layout.addWidget(self.bars_area)
        layout.addWidget(self.findings, 1)
        layout.addStretch(0)
        self.report: HealthReport | None = None
        self._asked = 0
        self.checking: asyncio.Task[HealthReport | None] | None = None
        self.hide()

    def clear(self) -> None:
        """Forget the run shown (a new run is starting) and hide."""
        self._asked += 1
        self.report = None
        self.findings.clear()
        self._clear_bars()
        self.hide()
        self.reported.emit(None)

    def check_session(self, store: Store, session_id: str) -> asyncio.Task[HealthReport | None]:
        """Check the saved session `session_id` and show what was found, reading and checking
        in a worker thread: a run of thousands of calls, or one whose model code sent megabytes,
        takes seconds to check, which the window's event loop does not wait for. A result that
        arrives after the panel moved on (cleared, or asked again) is dropped."""
        self._asked += 1
        self.checking = asyncio.ensure_future(self._check(store, session_id, self._asked))
        return self.checking

    async def _check(self, store: Store, session_id: str, asked: int) -> HealthReport | None:
        found = await asyncio.to_thread(_health_of, store, session_id)
        return self._present(found) if asked == self._asked else None

    def _present(self, found: HealthReport | Exception | None) -> HealthReport | None:
        """Show a check's outcome (see `_health_of`); the report, when there is one."""
        if found is None:
            self.clear()
            return None
        if isinstance(found, Exception):
            self._show_problem(found)
            return None
        self.show_report(found)
        return found

    def _show_problem(self, error: Exception) -> None:
        self.clear()
        self.summary.setText(f"No health check: {error}")
        self.show()

    def show_report(self, report: HealthReport) -> None:
        """Show `report`'s findings and coverage."""
        self.report = report
        warnings = len(report.warnings)
        notes = len(report.findings) - warnings
        parts = [fmt.plural(warnings, "warning")] if warnings else []
        parts += [fmt.plural(notes, "note")] if notes else []
        self.summary.setText(
            " · ".join(parts) if parts else "No findings: none of the known failure modes showed."
        )
        note = report.coverage.unscanned_note
        self.summary.setToolTip(note or "")
        if note:
            self.summary.setText(f"{self.summary.text()} · coverage partly checked")
        self._show_coverage(report)
        self.findings.clear()
        for finding in report.findings:
            self.findings.addTopLevelItem(_finding_item(finding))
        self.findings.setVisible(bool(report.findings))
        self.show()
        self.findings.updateGeometry()
        QTimer.singleShot(0, self.findings, self.findings.updateGeometry)  # rows laid out
        self.reported.emit(report)

    def _show_coverage(self, report: HealthReport) -> None:
        self._clear_bars()
        for document in report.coverage.documents:
            bar = QProgressBar()
            bar.setRange(0, BAR_STEPS)
            bar.setValue(round(document.share * BAR_STEPS))
            bar.setFormat(f"{document.share:.0%} read · {PurePath(document.name).name}")
            bar.setAccessibleName(f"Coverage of {document.name}")
            gaps = len(document.uncovered)
            bar.setToolTip(
                f"{document.covered:,} of {document.chars:,} characters reached a model"
                + (f"; {fmt.plural(gaps, 'range')} unread" if gaps else "")
                + (f"\n{report.coverage.unscanned_note}" if report.coverage.unscanned_note else "")
            )
            self._bars_layout.addWidget(bar)
        shown = min(len(report.coverage.documents), BARS_SHOWN)
        bar_height = QProgressBar().sizeHint().height() + self._bars_layout.spacing()
        self.bars_area.setFixedHeight(shown * bar_height)

    def _clear_bars(self) -> None:
        while (item := self._bars_layout.takeAt(0)) is not None:
            widget = item.widget()
            if widget is not None:
                widget.deleteLater()

    def _on_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        target = item.data(0, TARGET)
        if isinstance(target, tuple | list) and len(target) == 2:
            self.call_chosen.emit(str(target[0]), int(target[1]))


def _finding_item(finding: Finding) -> QTreeWidgetItem:
    title = KIND_TITLES.get(finding.kind, finding.kind)
    item = QTreeWidgetItem([f"{MARKS[finding.severity]} {title}: {finding.message}"])
    advice = for_the_window(finding.advice)
    item.setToolTip(0, advice)
    item.addChild(QTreeWidgetItem([f"What to do: {advice}"]))
    evidence: list[tuple[str, str, int]] = [
        (turn_name(turn), turn[0], turn[1]) for turn in finding.turns
    ]
    if not evidence:
        evidence = [(f"call {call_id}", call_id, -1) for call_id in finding.calls]
    for text, call_id, turn in evidence[:SHOWN_EVIDENCE]:
        child = QTreeWidgetItem([text])
        child.setData(0, TARGET, (call_id, turn))
        item.addChild(child)
    if len(evidence) > SHOWN_EVIDENCE:
        item.addChild(QTreeWidgetItem([f"… {len(evidence) - SHOWN_EVIDENCE:,} more"]))
    if finding.turns and finding.calls:
        first = finding.turns[0]
        item.setData(0, TARGET, (first[0], first[1]))
    elif finding.calls:
        item.setData(0, TARGET, (finding.calls[0], -1))
    return item


def _health_of(store: Store, session_id: str) -> HealthReport | Exception | None:
    """The health report of a saved session, the store's error when it cannot be read, or None
    when there is no session to check."""
    from rlm_desktop.review.health import session_health
    from rlm_desktop.store import StoreError

    if not session_id:
        return None
    try:
        return session_health(store, session_id)
    except StoreError as error:
        return error
