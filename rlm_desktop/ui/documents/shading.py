"""Shading a stretch of the documents preview: what coverage and a source's passage share."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable

from PySide6.QtGui import QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def qt_positions(text: str) -> Callable[[int], int]:
    """The position in a Qt document of each offset in `text`: Qt counts UTF-16 units, so an
    emoji before it counts two."""
    astral = [match.start() for match in _ASTRAL.finditer(text)]
    return lambda offset: offset + bisect_left(astral, offset)


def shaded(
    preview: QPlainTextEdit,
    position: Callable[[int], int],
    start: int,
    end: int,
    style: QTextCharFormat,
) -> QTextEdit.ExtraSelection:
    """An extra selection of the preview from offset `start` to `end` (`position` turns them
    into Qt's positions) in `style`."""
    cursor = QTextCursor(preview.document())
    cursor.setPosition(position(start))
    cursor.setPosition(position(end), QTextCursor.MoveMode.KeepAnchor)
    selection = QTextEdit.ExtraSelection()
    selection.cursor = cursor
    selection.format = style
    return selection
