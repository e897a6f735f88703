"""The dashboard's tables: a measure (cost, tokens, time, sub-calls) per model, depth setting or
profile, and the runs in a tail."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QTableWidget, QTableWidgetItem

from rlm_desktop import formatting as fmt
from rlm_desktop.review.history import Group, RunSummary

ID_ROLE = Qt.ItemDataRole.UserRole + 1
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
TAIL_COLUMNS = ("Date", "Cost", "Tokens", "Time", "Sub-calls", "Status", "Model", "Question")


def _table(columns: Sequence[str], name: str) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.setAccessibleName(name)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.horizontalHeader().setStretchLastSection(True)
    return table


def _fill(
    table: QTableWidget,
    rows: Sequence[Sequence[str]],
    numeric: set[int],
    ids: Sequence[str] = (),
) -> None:
    """Put `rows` in `table` (each row's cells keep `ids[row]`), then size the columns once:
    sizing them to their contents as each cell arrives costs seconds for a few hundred cells."""
    table.setUpdatesEnabled(False)
    table.clearContents()
    table.setRowCount(len(rows))
    for r, values in enumerate(rows):
        for c, value in enumerate(values):
            item = QTableWidgetItem(value)
            if c in numeric:
                item.setTextAlignment(RIGHT)
            if ids:
                item.setData(ID_ROLE, ids[r])
            table.setItem(r, c, item)
    table.resizeColumnsToContents()
    table.setUpdatesEnabled(True)


def breakdown_table(title: str) -> QTableWidget:
    """An empty table of a measure per `title` (model, depth or profile)."""
    return _table((title, "Runs", "Total cost", "Median cost"), f"Cost by {title.lower()}")


def show_groups(
    table: QTableWidget,
    groups: list[Group],
    noun: str = "cost",
    show: Callable[[float], str] = fmt.dollars,
) -> None:
    """Fill a `breakdown_table` with `groups` of the measure called `noun`, each value as
    `show` writes it; a group none of whose runs has the measure reads "unpriced" for cost."""
    title = table.horizontalHeaderItem(0)
    first = title.text() if title is not None else ""
    table.setHorizontalHeaderLabels([first, "Runs", f"Total {noun}", f"Median {noun}"])
    table.setAccessibleName(f"{noun.capitalize()} by {first.lower()}")
    missing = fmt.UNPRICED if noun == "cost" else "—"
    rows = [
        (
            group.key,
            f"{group.runs:,}",
            show(group.total) if group.measured_runs else missing,
            show(group.median) if group.median is not None else "—",
        )
        for group in groups
    ]
    _fill(table, rows, {1, 2, 3})


def tail_table() -> QTableWidget:
    """An empty table of the runs in a tail; each row keeps its session id."""
    table = _table(TAIL_COLUMNS, "Runs in the tail")
    table.setWordWrap(False)
    return table


def show_runs(table: QTableWidget, runs: list[RunSummary]) -> None:
    """Fill a `tail_table`."""
    rows = [
        (
            fmt.when(run.started_at),
            fmt.cost(run.cost_usd),
            fmt.tokens(run.tokens),
            fmt.seconds(run.wall_s) or "—",
            f"{run.sub_calls:,}",
            fmt.status_text(run.status),
            run.model,
            fmt.one_line(run.query, 100),
        )
        for run in runs
    ]
    _fill(table, rows, {1, 2, 3, 4}, [run.id for run in runs])
    question = len(TAIL_COLUMNS) - 1
    for r, run in enumerate(runs):
        cell = table.item(r, question)
        if cell is not None:
            cell.setToolTip(run.query)


def selected_id(table: QTableWidget) -> str | None:
    """The session id of the selected row of a `tail_table`."""
    items = table.selectedItems()
    return str(items[0].data(ID_ROLE)) if items else None
