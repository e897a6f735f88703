"""What of each document the run shown read: a bar in the documents list, shading in the preview."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QColor, QPainter, QTextCharFormat
from PySide6.QtWidgets import (
    QPlainTextEdit,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from rlm_desktop.ui.appearance.theme import colors
from rlm_desktop.ui.documents.model import SHARE_ROLE
from rlm_desktop.ui.documents.shading import qt_positions, shaded
from rlm_desktop.ui.shared.indexes import Index

BAR_HEIGHT = 6
BAR_GAP = 2
READ_SHADE_ALPHA = 60


class CoverageBarDelegate(QStyledItemDelegate):
    """The "Read" column: the share as text over a thin bar of that length."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        """Draw the cell's text above the bar, then the bar along its bottom edge (the text
        drawn over the whole cell was struck through by its own bar)."""
        share = index.data(SHARE_ROLE)
        if share is None:
            super().paint(painter, option, index)
            return
        above = QStyleOptionViewItem(option)
        above.rect = option.rect.adjusted(0, 0, 0, -(BAR_HEIGHT + BAR_GAP))
        super().paint(painter, above, index)
        rect: QRect = option.rect.adjusted(3, 0, -3, -2)
        track = QRect(rect.left(), rect.bottom() - BAR_HEIGHT, rect.width(), BAR_HEIGHT)
        painter.save()
        painter.fillRect(track, QColor(colors().card_border))
        filled = QRect(track)
        filled.setWidth(round(track.width() * float(share)))
        painter.fillRect(filled, QColor(colors().accent))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        """Room for the text and, under it, the bar."""
        size = super().sizeHint(option, index)
        return size + QSize(0, BAR_HEIGHT + BAR_GAP)

    def initStyleOption(self, option: QStyleOptionViewItem, index: Index) -> None:
        """No focus frame over the bar."""
        super().initStyleOption(option, index)
        option.state &= ~QStyle.StateFlag.State_HasFocus


def shade_read(preview: QPlainTextEdit, text: str, read: Sequence[tuple[int, int]]) -> int:
    """Shade the `[start, end)` ranges (offsets into `text`, the preview's text) that were read;
    returns how many ranges were shaded (those past the end of the text shown are left out)."""
    position = qt_positions(text)
    shade = QColor(colors().accent)
    shade.setAlpha(READ_SHADE_ALPHA)
    style = QTextCharFormat()
    style.setBackground(shade)
    selections = []
    for start, end in read:
        if start >= len(text):
            break
        selections.append(shaded(preview, position, start, min(end, len(text)), style))
    preview.setExtraSelections(selections)
    return len(selections)
