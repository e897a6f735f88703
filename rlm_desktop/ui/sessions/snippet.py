"""A search hit's snippet in a table cell, with the matched words in bold, its first match in
sight however narrow the column (the text slides left under an ellipsis to show it)."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QFont,
    QPainter,
    QPalette,
    QTextDocument,
    QTextLine,
    QTextOption,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from rlm_desktop.store.search import segments
from rlm_desktop.ui.shared.indexes import Index

HTML_ROLE = Qt.ItemDataRole.UserRole + 2
"""The item role that holds a snippet as HTML (the display role keeps it as plain text)."""
SLIDE_MARGIN = 24
"""Pixels kept after the first match when the text slides left to show it."""


def snippet_html(hit: dict[str, Any]) -> str:
    """The hit's snippet as HTML, matched words in bold."""
    return "".join(
        f"<b>{html.escape(text)}</b>" if matched else html.escape(text)
        for text, matched in segments(hit)
    )


def marked_document(marked: str, font: QFont) -> QTextDocument:
    """The HTML text `marked` laid out on one line in `font`, as the delegate paints it."""
    document = QTextDocument()
    document.setDocumentMargin(0)
    document.setDefaultFont(font)
    no_wrap = QTextOption()
    no_wrap.setWrapMode(QTextOption.WrapMode.NoWrap)
    document.setDefaultTextOption(no_wrap)
    document.setHtml(marked)
    return document


def first_match_shift(document: QTextDocument, width: int) -> int:
    """How far (pixels) to slide `document`'s one line left so that its first bold word ends
    inside `width` (0 when it does already, or has no bold word)."""
    document.size()  # lays the text out
    block = document.firstBlock()
    line = block.layout().lineAt(0) if block.layout() is not None else None
    it = block.begin()
    while line is not None and line.isValid() and not it.atEnd():
        fragment = it.fragment()
        if fragment.charFormat().fontWeight() >= QFont.Weight.Bold:
            begin = fragment.position() - block.position()
            left, right = (_x(line, at) for at in (begin, begin + fragment.length()))
            return round(max(0.0, min(left, right - width + SLIDE_MARGIN)))
        it += 1
    return 0


def _x(line: QTextLine, position: int) -> float:
    """Where `position` of `line` is drawn (PySide6 gives `cursorToX` as a (x, position) pair)."""
    at: tuple[float, int] = line.cursorToX(position)  # type: ignore[assignment]
    return float(at[0])


class MarkedTextDelegate(QStyledItemDelegate):
    """Paints an item's `HTML_ROLE` text on one line, in the view's colours, slid left to show
    its first match when the column is too narrow for the text before it."""

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
        document = marked_document(marked, item.font)
        selected = bool(item.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, item.palette.color(role))
        area = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, item, widget)
        top = area.top() + max(0, (area.height() - round(document.size().height())) // 2)
        width = area.width() - 2
        shift = first_match_shift(document, width)
        painter.save()
        painter.translate(area.left() + 2, top)
        painter.setClipRect(0, 0, width, area.height())
        if shift:  # the start is cut: say so
            ellipsis = painter.fontMetrics().horizontalAdvance("… ")
            painter.setPen(item.palette.color(role))
            painter.drawText(0, painter.fontMetrics().ascent(), "…")
            painter.setClipRect(ellipsis, 0, width - ellipsis, area.height())
            painter.translate(ellipsis - shift, 0)
        document.documentLayout().draw(painter, context)
        painter.restore()
