"""The window's pages inside a frame that scrolls only when the screen is smaller than they can
be: at the largest interface size (32 pt) at 2× on a 2560×1440 screen the panes' least sizes add
up to more than the screen, and a window that size would hang off it. The window never outgrows
its screen; the pages keep their least size and scroll instead. Zooming with the keyboard still
refuses a step the screen has no room for (`least_size`), so scrolling is the last resort of an
interface size chosen in Settings."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

LEAST = QSize(480, 320)
"""The least the window's content area takes on any screen (then it scrolls)."""


class FitsTheScreen(QScrollArea):
    """`content` at the window's whole size, scrolled when the window cannot be as large as
    `content`'s least size."""

    def __init__(self, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.content = content
        self.setObjectName("fitsTheScreen")
        self.setWidget(content)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.viewport().setAutoFillBackground(False)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """The content's own."""
        return self.content.sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """`LEAST`, or the content's least where that is smaller: the window may shrink to its
        screen whatever the interface size."""
        return self.content.minimumSizeHint().boundedTo(LEAST)

    def content_least(self) -> QSize:
        """The content's least size: what the window needs to show it without scrolling."""
        return self.content.minimumSizeHint()
