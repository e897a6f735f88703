"""A source's passage in the documents preview: its own shade, over coverage's."""

from __future__ import annotations

from PySide6.QtGui import QColor, QTextCharFormat, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit

from rlm_desktop.ui.appearance.theme import colors
from rlm_desktop.ui.documents.shading import qt_positions, shaded

PASSAGE_PROPERTY = QTextFormat.Property.UserProperty + 1
"""Set on the passage's format, so that it can be told from coverage's shading."""


def mark_passage(preview: QPlainTextEdit, text: str, start: int, end: int) -> bool:
    """Add a shade over `[start, end)` of `text` (the preview's text) to the preview's extra
    selections, after coverage's so that it shows on top; False when it lies past the text."""
    start, end = max(0, start), min(end, len(text))
    if start >= end:
        return False
    style = QTextCharFormat()
    style.setBackground(QColor(colors().passage))
    style.setProperty(PASSAGE_PROPERTY, True)
    selection = shaded(preview, qt_positions(text), start, end, style)
    preview.setExtraSelections([*preview.extraSelections(), selection])
    return True
