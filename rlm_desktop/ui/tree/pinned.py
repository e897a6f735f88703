"""A tree view whose first column stays put when the other columns scroll sideways.

Qt's views have no frozen columns, so a second tree view showing only the first column lies over
the left edge of the main one (as in Qt's "frozen column" example). The two share the model and
the selection; the overlay scrolls with the main view, and their expanded rows and first-column
width follow each other.
The overlay is only attached while the view is scrolled sideways: unscrolled, the main view's
own first column is already in place, and a live run's rows are laid out once, not twice. So is
the delegate that measures rows by their first column: Qt asks it for every column of a row on
each update of the first row, and unscrolled Qt's own delegate measures the same.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QSize, Qt
from PySide6.QtGui import QResizeEvent, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeView,
    QWidget,
)

from rlm_desktop.ui.shared.indexes import Index

FIRST_LEAST_PX = 160
"""The pinned column narrows for the columns beside it no further than this."""


class _FirstColumnHeight(QStyledItemDelegate):
    """Rows as tall as their first column (with its icon), whichever columns are in sight.

    With uniform row heights a tree view measures the first row over the columns it shows, so
    scrolled sideways its rows would shrink and no longer line up with the pinned column.
    """

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        """The usual size, at least as tall as the row's first cell."""
        size = super().sizeHint(option, index)
        if index.column() > 0:
            first = super().sizeHint(option, index.sibling(index.row(), 0))
            size.setHeight(max(size.height(), first.height()))
        return size


class _PinnedColumn(QTreeView):
    """The overlay: it never scrolls on its own, and hands the wheel to the view it sits on."""

    def __init__(self, owner: PinnedTreeView) -> None:
        super().__init__(owner)
        self.owner = owner

    def wheelEvent(self, event: QWheelEvent) -> None:
        """Scroll the main view (the overlay follows it)."""
        self.owner.wheelEvent(event)


class PinnedTreeView(QTreeView):
    """A `QTreeView` with its first column pinned; `pinned` is the overlay that shows it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.keep_in_sight = 0
        """How many columns after the first a narrowing view keeps in sight."""
        self.setUniformRowHeights(True)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAllColumnsShowFocus(True)
        self._plain_delegate = self.itemDelegate()
        self._first_column_height = _FirstColumnHeight(self)
        pinned = self.pinned = _PinnedColumn(self)
        pinned.setObjectName("pinnedColumn")
        pinned.setAccessibleName("Call column")
        pinned.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        pinned.setFrameShape(QFrame.Shape.NoFrame)
        pinned.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        pinned.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        pinned.setUniformRowHeights(True)
        pinned.setAlternatingRowColors(True)
        pinned.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        pinned.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        pinned.header().setSectionsMovable(False)
        pinned.header().setStretchLastSection(False)
        pinned.setAutoScroll(False)
        pinned.hide()
        self.verticalScrollBar().valueChanged.connect(pinned.verticalScrollBar().setValue)
        pinned.verticalScrollBar().rangeChanged.connect(self._follow_scroll)
        self.horizontalScrollBar().valueChanged.connect(self._on_sideways)
        self.expanded.connect(pinned.expand)
        self.collapsed.connect(pinned.collapse)
        pinned.expanded.connect(self.expand)
        pinned.collapsed.connect(self.collapse)
        pinned.pressed.connect(lambda _index: self.setFocus())
        self.header().sectionResized.connect(self._on_main_resized)
        pinned.header().sectionResized.connect(self._on_pinned_resized)

    @property
    def is_pinned(self) -> bool:
        """True while the first column is held in place over a view scrolled sideways."""
        return self.pinned.model() is not None

    def setModel(self, model: QAbstractItemModel | None) -> None:
        """Show `model`; the pinned column follows it while the view is scrolled sideways."""
        self._unpin()
        super().setModel(model)
        self._on_sideways(self.horizontalScrollBar().value())

    def _on_sideways(self, value: int) -> None:
        if value > 0 and not self.is_pinned and self.model() is not None:
            self._pin()
        elif value == 0 and self.is_pinned:
            self._unpin()

    def _pin(self) -> None:
        model = self.model()
        pinned = self.pinned
        self.setItemDelegate(self._first_column_height)
        pinned.setModel(model)
        pinned.setSelectionModel(self.selectionModel())
        for column in range(1, model.columnCount()):
            pinned.setColumnHidden(column, True)
        self._copy_expanded(QModelIndex())
        self._place()
        pinned.show()
        self._follow_scroll()

    def _follow_scroll(self) -> None:
        self.pinned.verticalScrollBar().setValue(self.verticalScrollBar().value())

    def _unpin(self) -> None:
        self.pinned.hide()
        self.pinned.setModel(None)
        if self.itemDelegate() is not self._plain_delegate:
            self.setItemDelegate(self._plain_delegate)

    def _copy_expanded(self, parent: QModelIndex) -> None:
        model = self.model()
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            if self.isExpanded(index):
                self.pinned.expand(index)
                self._copy_expanded(index)

    def expandAll(self) -> None:
        """Expand every row of both views."""
        super().expandAll()
        if self.is_pinned:
            self.pinned.expandAll()

    def collapseAll(self) -> None:
        """Collapse every row of both views."""
        super().collapseAll()
        if self.is_pinned:
            self.pinned.collapseAll()

    def _on_main_resized(self, section: int, _old: int, _new: int) -> None:
        if section == 0 and self.is_pinned:
            self._place()

    def _on_pinned_resized(self, section: int, _old: int, new: int) -> None:
        if section == 0 and self.columnWidth(0) != new:
            self.setColumnWidth(0, new)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the pinned column over the left edge; as the view narrows, the column gives
        way (down to `FIRST_LEAST_PX`) so the `keep_in_sight` columns after it stay in view."""
        super().resizeEvent(event)
        if event.size().width() < event.oldSize().width() or event.oldSize().width() < 0:
            beside = sum(self.columnWidth(c) for c in range(1, self.keep_in_sight + 1))
            cap = max(FIRST_LEAST_PX, self.viewport().width() - beside)
            if self.columnWidth(0) > cap:
                self.setColumnWidth(0, cap)
        if self.is_pinned:
            self._place()

    def updateGeometries(self) -> None:
        """Follow the header's height and the viewport's size."""
        super().updateGeometries()
        if self.is_pinned:
            self._place()

    def _place(self) -> None:
        frame = self.frameWidth()
        width = self.columnWidth(0)
        if self.pinned.columnWidth(0) != width:
            self.pinned.setColumnWidth(0, width)
        height = self.viewport().height() + self.header().height()
        self.pinned.setGeometry(frame, frame, width, height)

    def scrollTo(
        self,
        index: Index,
        hint: QAbstractItemView.ScrollHint = QAbstractItemView.ScrollHint.EnsureVisible,
    ) -> None:
        """Scroll to `index` vertically only: the pinned column is always in sight."""
        sideways = self.horizontalScrollBar().value()
        super().scrollTo(index, hint)
        self.horizontalScrollBar().setValue(sideways)
