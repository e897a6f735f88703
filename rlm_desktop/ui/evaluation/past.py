"""The evaluation page's list of past evaluations, newest first: when, the task set, the trials
run, whether it is complete, partial or running, and each setting's mean score. Choosing one
emits its id; the page then shows it as it would after a run (`evaluation.history`)."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtWidgets import QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.evaluation.history import PastEvaluation
from rlm_desktop.ui.shared.stored_list import Listed, StoredList

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


def listed(past: PastEvaluation) -> Listed:
    """How a past evaluation is listed."""
    return Listed(past.id, STATUS_OF_STATE[past.state], item_text(past), item_tip(past))


class PastEvaluations(StoredList[PastEvaluation]):
    """The list; `chosen(id)` when the user picks one, `refresh` fills it again."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Past evaluations", EMPTY, listed, parent=parent)
