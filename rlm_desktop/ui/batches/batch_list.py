"""The Batches view's list of stored batches, newest first: when, the questions file, rows done
of the total and what it cost, with its state's icon. Choosing one emits its id."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from rlm_desktop import formatting as fmt
from rlm_desktop.ui.batches.listing import BatchEntry
from rlm_desktop.ui.batches.plain import plain_tip
from rlm_desktop.ui.evaluation.past import STATUS_OF_STATE, when
from rlm_desktop.ui.shared.stored_list import Listed, StoredList

EMPTY = (
    "No batches yet. Run one in a terminal with <code style='white-space:nowrap'>rlm-desktop "
    "batch</code> <code style='white-space:nowrap'>--questions FILE</code>: a CSV or JSONL file, "
    "a question and its documents a row. Each batch is listed here with its rows; double-click "
    "a row to open its run in the window."
)


def rows_line(entry: BatchEntry) -> str:
    """`7 of 10 rows · 2 failed · $0.042`."""
    parts = [f"{entry.done:,} of {fmt.plural(entry.record.rows, 'row')}"]
    if entry.failed:
        parts.append(f"{entry.failed:,} failed")
    parts.append(fmt.cost(entry.spent_usd, entry.unpriced))
    return " · ".join(parts)


def item_text(entry: BatchEntry) -> str:
    """Three lines: when and the state; the questions file's name; rows and cost."""
    return "\n".join(
        [f"{when(entry.record.created_at)} · {entry.state}", entry.name, rows_line(entry)]
    )


def item_tip(entry: BatchEntry) -> str:
    """Everything about one batch, a line each."""
    record = entry.record
    return "\n".join(
        [
            f"Batch {record.id}, created {when(record.created_at)} · {entry.state}",
            f"Questions: {record.questions}",
            f"Model: {entry.model or '—'}",
            rows_line(entry),
        ]
    )


def listed(entry: BatchEntry) -> Listed:
    """How a batch is listed (its tooltip literal: it names the user's files)."""
    state = STATUS_OF_STATE[entry.state]
    return Listed(entry.record.id, state, item_text(entry), plain_tip(item_tip(entry)))


class BatchList(StoredList[BatchEntry]):
    """The list; `chosen(id)` when the user picks one, `refresh` fills it again."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            "Batches", EMPTY, listed, elide=Qt.TextElideMode.ElideMiddle, parent=parent
        )
