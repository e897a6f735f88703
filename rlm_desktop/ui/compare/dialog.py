"""Two saved runs side by side: settings and figures in one table (what differs in bold, with
the change), the answers' differences word by word, and the two trees and timelines next to each
other, on one time scale (the longer run's) unless the user asks for each run's own. What is
compared comes from `review.compare`; this window only draws it."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from rlm_desktop.review.compare import Comparison, Line, Segment, load_comparison
from rlm_desktop.ui.appearance.theme import colors
from rlm_desktop.ui.compare.side import RunSide
from rlm_desktop.ui.shared.widgets import dialog_buttons, resize_within_screen

if TYPE_CHECKING:
    from rlm_desktop.store import Store

HEADERS = ("", "Left", "Right", "Change")
MAX_COLUMN_PX = 320


def answer_html(segments: list[Segment]) -> str:
    """The answers' differences as rich text: the left's words struck out in red, the right's
    underlined in green, what both say as is (all of it escaped)."""
    palette = colors()
    styles = {
        "same": "",
        "left": f"color:{palette.error}; text-decoration:line-through;",
        "right": f"color:{palette.ok}; text-decoration:underline;",
    }
    parts = []
    for segment in segments:
        text = escape(segment.text).replace("\n", "<br>")
        style = styles[segment.side]
        parts.append(f"<span style='{style}'>{text}</span>" if style else text)
    return "".join(parts) or "<i>(neither run answered)</i>"


def lines_table(sections: list[tuple[str, list[Line]]]) -> QTableWidget:
    """The compared settings and figures, a heading row per section."""
    rows = sum(len(lines) + 1 for _, lines in sections)
    table = QTableWidget(rows, len(HEADERS))
    table.setHorizontalHeaderLabels(HEADERS)
    table.setAccessibleName("Settings and figures")
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    bold = QFont(table.font())
    bold.setBold(True)
    row = 0
    for title, lines in sections:
        heading = QTableWidgetItem(title)
        heading.setFont(bold)
        table.setItem(row, 0, heading)
        row += 1
        for line in lines:
            for column, text in enumerate((line.name, line.left, line.right, line.change)):
                item = QTableWidgetItem(text)
                if line.differs:
                    item.setFont(bold)
                if column:
                    item.setToolTip(text)
                table.setItem(row, column, item)
            row += 1
    table.resizeColumnsToContents()
    header = table.horizontalHeader()
    for column in (0, 3):  # the names and the changes as wide as they need, up to a cap
        table.setColumnWidth(column, min(table.columnWidth(column), MAX_COLUMN_PX))
    for column in (1, 2):  # the two runs' values share what is left, half each; a long value (a
        # question, a path) is elided rather than pushing the other out of sight (tooltip: whole)
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
    return table


class CompareDialog(QDialog):
    """Compares the saved sessions `left_id` and `right_id` (ids or unique prefixes)."""

    def __init__(
        self, store: Store, left_id: str, right_id: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.comparison: Comparison = load_comparison(store, left_id, right_id)
        found = self.comparison
        self.setWindowTitle("Compare runs")
        self.setAccessibleName("Compare runs")
        self.table = lines_table([("Figures", found.figures), ("Settings", found.settings)])
        self.answer = QTextBrowser()
        self.answer.setAccessibleName("Answers compared")
        self.answer.setHtml(answer_html(found.answer))
        verdict = (
            "Same answer."
            if found.same_answer
            else "The answers differ: struck out, the left's only; underlined, the right's only."
        )
        answer_box = QWidget()
        answer_layout = QVBoxLayout(answer_box)
        answer_layout.setContentsMargins(0, 0, 0, 0)
        answer_layout.addWidget(QLabel(verdict))
        answer_layout.addWidget(self.answer)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.table)
        top.addWidget(answer_box)
        top.setStretchFactor(0, 3)  # the table has four columns to show, the answer wraps
        top.setStretchFactor(1, 2)
        top.setSizes([660, 440])
        self.left = RunSide(store, found.left)
        self.right = RunSide(store, found.right)
        self.one_scale = QCheckBox("One time scale")
        self.one_scale.setToolTip(
            "Both timelines on the longer run's time scale, zoomed and panned together, so their"
            " lengths compare truthfully; untick to fit each timeline to its own run"
        )
        self.one_scale.setChecked(True)
        self.one_scale.toggled.connect(self.share_scale)
        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(self.left)
        sides.addWidget(self.right)
        whole = QSplitter(Qt.Orientation.Vertical)
        whole.addWidget(top)
        whole.addWidget(sides)
        whole.setSizes([260, 560])
        layout = QVBoxLayout(self)
        layout.addWidget(whole, 1)
        layout.addLayout(dialog_buttons(self, [self.one_scale]))
        resize_within_screen(self, 1280, 860)
        self.share_scale(True)

    def share_scale(self, shared: bool) -> None:
        """Both timelines on the longer run's time scale, their time axes linked (`shared`), or
        each on its own run's."""
        left, right = self.left.timeline.ensure_view(), self.right.timeline.ensure_view()
        right.box.setXLink(None)
        span = max(self.left.length, self.right.length) if shared else None
        for side in (self.left, self.right):
            side.share_scale(span)
        if shared:
            right.box.setXLink(left.box)
