"""A source's passage in the documents preview: its own shade, over coverage's."""

from __future__ import annotations

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

from rlm_desktop.ui.appearance.theme import colors

PASSAGE_PROPERTY = QTextFormat.Property.UserProperty + 1
"""Set on the passage's format, so that it can be told from coverage's shading."""


def _position(text: str, offset: int) -> int:
    """`offset` in `text` as a position in the preview (Qt counts UTF-16 units)."""
    return offset + sum(1 for ch in text[:offset] if ord(ch) > 0xFFFF)


def mark_passage(preview: QPlainTextEdit, text: str, start: int, end: int) -> bool:
    """Add a shade over `[start, end)` of `text` (the preview's text) to the preview's extra
    selections, after coverage's so that it shows on top; False when it lies past the text."""
    start, end = max(0, start), min(end, len(text))
    if start >= end:
        return False
    style = QTextCharFormat()
    style.setBackground(QColor(colors().passage))
    style.setProperty(PASSAGE_PROPERTY, True)
    cursor = QTextCursor(preview.document())
    cursor.setPosition(_position(text, start))
    cursor.setPosition(_position(text, end), QTextCursor.MoveMode.KeepAnchor)
    selection = QTextEdit.ExtraSelection()
    selection.cursor = cursor
    selection.format = style
    preview.setExtraSelections([*preview.extraSelections(), selection])
    return True
