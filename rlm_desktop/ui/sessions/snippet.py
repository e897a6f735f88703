"""A search hit's snippet in a table cell, with the matched words in bold."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QPainter,
    QPalette,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from rlm_desktop.store.search import segments
from rlm_desktop.ui.shared.indexes import Index

HTML_ROLE = Qt.ItemDataRole.UserRole + 2
"""The item role that holds a snippet as HTML (the display role keeps it as plain text)."""


def snippet_html(hit: dict[str, Any]) -> str:
    """The hit's snippet as HTML, matched words in bold."""
    return "".join(
        f"<b>{html.escape(text)}</b>" if matched else html.escape(text)
        for text, matched in segments(hit)
    )


class MarkedTextDelegate(QStyledItemDelegate):
    """Paints an item's `HTML_ROLE` text on one line, in the view's colours."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        """Draw the item as usual without its text, then the HTML text over it."""
        marked = index.data(HTML_ROLE)
        if not marked:
            super().paint(painter, option, index)
            return
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        item.text = ""
        widget = item.widget
        style = widget.style() if widget is not None else None
        if style is None:
            super().paint(painter, option, index)
            return
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, item, painter, widget)
        document = QTextDocument()
        document.setDocumentMargin(0)
        document.setDefaultFont(item.font)
        no_wrap = QTextOption()
        no_wrap.setWrapMode(QTextOption.WrapMode.NoWrap)
        document.setDefaultTextOption(no_wrap)
        document.setHtml(marked)
        selected = bool(item.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, item.palette.color(role))
        area = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, item, widget)
        top = area.top() + max(0, (area.height() - round(document.size().height())) // 2)
        painter.save()
        painter.translate(area.left() + 2, top)
        painter.setClipRect(0, 0, area.width() - 2, area.height())
        document.documentLayout().draw(painter, context)
        painter.restore()
