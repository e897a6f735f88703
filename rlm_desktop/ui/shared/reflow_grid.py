"""Captioned fields in as many columns as the width allows: three side by side on a wide
window, two or one on a narrow one or at a large interface size, so the fields never hold the
window wider than its screen."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QGridLayout, QLabel, QLayout, QWidget

COLUMN_CHOICES = (3, 2, 1)


class ReflowGrid(QWidget):
    """`fields` (caption, field) laid out in the most of `COLUMN_CHOICES` columns that fit; each
    caption is its field's buddy (for its shortcut). `orders` gives, per column count, the order
    the fields are placed in, row by row (by default the order given). Fields in `left_aligned`
    keep their own width instead of filling their column; `indent` is the room left before the
    first column."""

    def __init__(
        self,
        fields: Sequence[tuple[str, QWidget]],
        *,
        orders: dict[int, Sequence[int]] | None = None,
        left_aligned: Collection[QWidget] = (),
        stretches: Sequence[int] = (),
        indent: int = 0,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._cells: list[tuple[QLabel, QWidget]] = []
        for caption, field in fields:
            label = QLabel(caption)
            label.setBuddy(field)
            self._cells.append((label, field))
        self._orders = orders or {}
        self._left_aligned = set(left_aligned)
        self._stretches = stretches
        self.columns = 0
        """How many columns the fields are in now."""
        grid = self._grid = QGridLayout(self)
        grid.setContentsMargins(indent, 0, 0, 0)
        self._indent = indent
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(4)
        grid.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self._arrange(COLUMN_CHOICES[0])

    def _order(self, columns: int) -> Sequence[int]:
        return self._orders.get(columns, range(len(self._cells)))

    def _arrange(self, columns: int) -> None:
        if columns == self.columns:
            return
        grid = self._grid
        while grid.count():
            grid.takeAt(0)  # the item only: the widgets stay, to be placed again
        for column in range(grid.columnCount()):
            grid.setColumnStretch(column, 0)
        for place, index in enumerate(self._order(columns)):
            label, field = self._cells[index]
            row, column = divmod(place, columns)
            grid.addWidget(label, row, column * 2)
            if field in self._left_aligned:
                grid.addWidget(field, row, column * 2 + 1, Qt.AlignmentFlag.AlignLeft)
            else:
                grid.addWidget(field, row, column * 2 + 1)
        for column, stretch in enumerate(self._stretches[:columns]):
            grid.setColumnStretch(column * 2 + 1, stretch)
        self.columns = columns
        self.updateGeometry()

    def _width_needed(self, columns: int) -> int:
        """The least width `columns` columns take: per column its widest caption and field."""
        order = list(self._order(columns))
        widest = self._indent
        for column in range(columns):
            cells = [self._cells[i] for i in order[column::columns]]
            caption = max((c.sizeHint().width() for c, _ in cells), default=0)
            field = max((f.minimumSizeHint().width() for _, f in cells), default=0)
            widest += caption + field + 2 * 6
        return widest

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """As narrow as one column; as tall as the columns shown now."""
        return QSize(self._width_needed(COLUMN_CHOICES[-1]), self._grid.minimumSize().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        """Take the most columns that fit the new width."""
        super().resizeEvent(event)
        width = event.size().width()
        fitting = next((n for n in COLUMN_CHOICES if self._width_needed(n) <= width), 1)
        self._arrange(fitting)
