"""A pane that scrolls, instead of holding its window taller, when the window is short: the run
settings and budget on a 1024×640 laptop with the timeline open, or at a projector's type size."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QSizePolicy, QWidget


class ScrollWhenShort(QScrollArea):
    """`content` at its full height while there is room, scrolled vertically when there is not.

    Its least height is `keep`'s (the first line of fields), so the pane never folds away; its
    least width is the content's, so it never scrolls sideways (the content reflows instead).
    """

    def __init__(self, content: QWidget, keep: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._keep = keep
        self._content = content
        self.setWidget(content)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.viewport().setAutoFillBackground(False)
        content.setAutoFillBackground(False)
        content.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """Ask the window's layout again when the content's height changes (the budget opens,
        the fields reflow into more lines)."""
        if watched is self._content and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(watched, event)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """The content's own size: no scroll bar while the window has room for it."""
        content = self._content
        return QSize(content.sizeHint().width(), self._content_height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """As narrow as the content goes (no room kept for the scroll bar, which shows only in
        a short window: the window's least width stays what it was); as low as one line."""
        least = min(self._content_height(), self._keep.sizeHint().height())
        return QSize(self._content.minimumSizeHint().width(), least)

    def _content_height(self) -> int:
        content = self._content
        width = self.viewport().width()
        if content.hasHeightForWidth():
            return content.heightForWidth(width)
        return max(content.sizeHint().height(), content.minimumSizeHint().height())
