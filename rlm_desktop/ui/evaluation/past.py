"""The evaluation page's list of past evaluations, newest first: when, the task set, the trials
run, whether it is complete, partial or running, and each setting's mean score. Choosing one
emits its id; the page then shows it as it would after a run (`evaluation.history`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.evaluation.history import PastEvaluation
from rlm_desktop.ui.appearance.theme import status_icon
from rlm_desktop.ui.shared.widgets import note_label

ID_ROLE = Qt.ItemDataRole.UserRole
STATUS_OF_STATE = {"complete": "completed", "partial": "interrupted", "running": "running"}
"""The run status whose icon stands for each state of an evaluation."""
EMPTY = (
    "No past evaluations yet. Each one you start is listed here and opens again, with its "
    "table and charts, without running anything."
)


def when(created_at: str) -> str:
    """An evaluation's ISO creation time as the app writes times (the text itself if odd)."""
    try:
        return fmt.when(datetime.fromisoformat(created_at).timestamp())
    except ValueError:
        return created_at


def item_text(past: PastEvaluation) -> str:
    """Three lines: when and the state; the task set; the trials and each setting's score."""
    return "\n".join(
        [
            f"{when(past.created_at)} · {past.state}",
            past.tasks,
            f"{past.trials} · {past.score_line}",
        ]
    )


def item_tip(past: PastEvaluation) -> str:
    """Everything about one past evaluation, a line each."""
    return "\n".join(
        [
            f"Evaluation {past.id}, created {when(past.created_at)}",
            f"Tasks: {past.tasks}",
            f"Settings: {', '.join(past.settings)}",
            f"{past.trials.capitalize()} · {past.state}",
            f"Mean scores: {past.score_line}",
        ]
    )


class PastEvaluations(QWidget):
    """The list; `chosen(id)` when the user picks one, `refresh` fills it again."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entries: list[PastEvaluation] = []
        title = QLabel("Past evaluations")
        title.setObjectName("cardTitle")
        self.list = QListWidget()
        self.list.setAccessibleName("Past evaluations")
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentItemChanged.connect(self._current_changed)
        self.empty = note_label(EMPTY)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        layout.addStretch(0)
        self.refresh([])

    def refresh(self, entries: Sequence[PastEvaluation], current: str | None = None) -> None:
        """List `entries` (newest first), with `current` selected, without emitting `chosen`."""
        self.entries = list(entries)
        with QSignalBlocker(self.list):
            self.list.clear()
            for past in entries:
                item = QListWidgetItem(status_icon(STATUS_OF_STATE[past.state]), item_text(past))
                item.setData(ID_ROLE, past.id)
                item.setToolTip(item_tip(past))
                self.list.addItem(item)
            self.select(current)
        self.list.setVisible(bool(entries))
        self.empty.setVisible(not entries)

    def select(self, evaluation_id: str | None) -> None:
        """Select the evaluation `evaluation_id` (none: clear the selection), without emitting."""
        with QSignalBlocker(self.list):
            row = next((i for i, p in enumerate(self.entries) if p.id == evaluation_id), -1)
            self.list.setCurrentRow(row)
            if row < 0:
                self.list.clearSelection()

    def _current_changed(self, item: QListWidgetItem | None, _previous: object) -> None:
        if item is not None:
            self.chosen.emit(str(item.data(ID_ROLE)))
