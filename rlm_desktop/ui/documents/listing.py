"""The documents list's view of its model: sorted by any column, filtered by name or type, and
the file's own name drawn first with its folder after it in grey when the Folder column is out.

Sorting and filtering change what is shown only: the run gets the model's rows in their order.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from rlm_desktop.documents.display_names import name_filter
from rlm_desktop.ui.appearance.theme import colors
from rlm_desktop.ui.documents.model import FOLDER_ROLE, NUMBER, SORT_ROLE, DocumentsModel
from rlm_desktop.ui.shared.indexes import Index

FOLDER_GAP = 8
"""Pixels between a name and the folder drawn after it."""
MIN_FOLDER_PX = 24
"""Narrower than this, the folder after a name is left out (the tooltip has the path)."""


class DocumentsProxy(QSortFilterProxyModel):
    """Sorts by `SORT_ROLE` and shows only the rows whose name or type matches `set_filter`."""

    def __init__(self, source: DocumentsModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.documents = source
        self.setSourceModel(source)
        self.setSortRole(SORT_ROLE)
        self.setDynamicSortFilter(True)
        self.text = ""
        self._matches: Callable[[str, str], bool] = name_filter("")

    def set_filter(self, text: str) -> None:
        """Show the rows matching `text` (`display_names.name_filter`); "" shows them all."""
        self.text = text.strip()
        self._matches = name_filter(self.text)
        self.invalidateFilter()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by `column`; by "#" upwards is the model's own order, kept without comparing
        (thousands of rows would each be asked for their key on every change)."""
        if column == NUMBER and order == Qt.SortOrder.AscendingOrder:
            column = -1
        super().sort(column, order)

    def filterAcceptsRow(  # noqa: N802
        self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex
    ) -> bool:
        """Whether the row's name or type matches the filter."""
        if not self.text:
            return True
        entry = self.documents.entries[source_row]
        kind = str(entry.document.type) if entry.document is not None else ""
        return self._matches(entry.name, kind)


class NameDelegate(QStyledItemDelegate):
    """The name column: the file's own name, whole if it fits, then its folder in grey (left
    out while `folder_shown()` says the Folder column shows it)."""

    def __init__(self, folder_shown: Callable[[], bool], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._folder_shown = folder_shown

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        """Draw the row's background, icon and name as usual, then the folder after the name."""
        folder = "" if self._folder_shown() else str(index.data(FOLDER_ROLE) or "")
        if not folder:
            super().paint(painter, option, index)
            return
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        name = item.text
        widget = item.widget
        style = widget.style() if widget is not None else None
        if style is None:
            super().paint(painter, option, index)
            return
        item.text = ""
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, item, painter, widget)
        area = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, item, widget)
        area = area.adjusted(3, 0, -3, 0)
        metrics = item.fontMetrics
        selected = bool(item.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.save()
        painter.setFont(item.font)
        painter.setPen(item.palette.color(role))
        shown = metrics.elidedText(name, Qt.TextElideMode.ElideRight, area.width())
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        painter.drawText(area, flags, shown)
        rest = area.adjusted(metrics.horizontalAdvance(shown) + FOLDER_GAP, 0, 0, 0)
        if rest.width() >= MIN_FOLDER_PX:
            painter.setPen(item.palette.color(role) if selected else QColor(colors().muted))
            painter.drawText(
                rest, flags, metrics.elidedText(folder, Qt.TextElideMode.ElideLeft, rest.width())
            )
        painter.restore()


class FolderDelegate(QStyledItemDelegate):
    """The Folder column, cut at its start when narrow: `…/licences/common` reads better than
    `analyst/lic…`, the nearest folder being the telling one."""

    def initStyleOption(self, option: QStyleOptionViewItem, index: Index) -> None:  # noqa: N802
        """Elide on the left."""
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideLeft
