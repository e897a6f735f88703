"""Small pieces several parts of the window are built from: labels, tool buttons, search boxes,
splitters, a dialog's button row, and a timer that waits for typing to settle."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, QSize, Qt, QTimer, SignalInstance
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QToolButton,
    QWidget,
)


def plain_label(text: str = "") -> QLabel:
    """A label for text from outside the app (a server's message, a file name, a model's words):
    shown as it is, never read as rich text (`QLabel` would render `<b>...</b>` in it)."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


class ElidedLabel(QLabel):
    """A one-line plain label that never holds its window wider: it takes the room it is given
    and ends its text with "…" where that is too short, the whole text in its tooltip."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._full = ""
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        """Show `text`, elided to the present width."""
        self._full = text
        self.setToolTip(text)
        self._elide()

    def text(self) -> str:
        """The whole text, as set (what is painted may end in "…")."""
        return self._full

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        """Elide again for the new width."""
        super().resizeEvent(event)
        self._elide()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """The whole text's size (it is shown whole where there is room)."""
        metrics = self.fontMetrics()
        return QSize(metrics.horizontalAdvance(self._full) + 4, super().sizeHint().height())

    def _elide(self) -> None:
        metrics = self.fontMetrics()
        super().setText(metrics.elidedText(self._full, Qt.TextElideMode.ElideRight, self.width()))


def note_label(text: str) -> QLabel:
    """A muted, word-wrapped explanation of the fields near it, in the app's own words (so it may
    use markup such as `<code>`)."""
    label = QLabel(text)
    label.setObjectName("muted")
    label.setWordWrap(True)
    return label


SCREEN_SHARE = 0.94
"""The most of its screen a dialog opens at, so its frame and buttons stay in view."""


def resize_within_screen(widget: QWidget, width: int, height: int) -> None:
    """Give `widget` its natural size, or less where its screen (a 1024x640 laptop, a
    high-DPI screen at 2x) has less room."""
    screen = widget.screen().availableGeometry().size()
    widget.resize(QSize(width, height).boundedTo(screen * SCREEN_SHARE))


def tool_button(
    text: str, tip: str, slot: Callable[[], object], mark: str | None = None
) -> QToolButton:
    """A flat button for a pane's tools, named for screen readers by its text; `mark` (a short
    sign such as "+") is shown in place of the text where a narrow pane has no room for words."""
    button = QToolButton()
    button.setText(mark or text)
    button.setToolTip(tip if mark is None else f"{text}: {tip[:1].lower()}{tip[1:]}")
    button.setAccessibleName(text.rstrip("…"))
    button.clicked.connect(slot)
    return button


def search_box(placeholder: str, name: str) -> QLineEdit:
    """A one-line search or filter field with a clear button."""
    box = QLineEdit()
    box.setPlaceholderText(placeholder)
    box.setAccessibleName(name)
    box.setClearButtonEnabled(True)
    return box


def when_settled(
    changed: SignalInstance, delay_ms: int, slot: Callable[[], object], parent: QObject
) -> QTimer:
    """Call `slot` once `changed` has been quiet for `delay_ms` (typing has settled).

    Returns the timer, so a caller that acts at once can `stop()` the pending call.
    """
    timer = QTimer(parent, singleShot=True, interval=delay_ms)
    timer.timeout.connect(slot)
    changed.connect(lambda *_args: timer.start())
    return timer


def splitter(
    orientation: Qt.Orientation, name: str, panes: Sequence[tuple[QWidget, int]]
) -> QSplitter:
    """A splitter named `name` (the name a remembered position is kept under) holding `panes`,
    each a widget and the stretch factor it grows by."""
    split = QSplitter(orientation)
    split.setObjectName(name)
    for index, (pane, stretch) in enumerate(panes):
        split.addWidget(pane)
        split.setStretchFactor(index, stretch)
    return split


BUTTON_GROUP_GAP = 16
"""Pixels between two groups of a dialog's buttons."""


def dialog_buttons(dialog: QDialog, *groups: Sequence[QWidget]) -> QHBoxLayout:
    """A dialog's bottom row: `groups` of buttons from the left, a gap between groups, and at the
    right end a Close button that closes the dialog as Esc does."""
    row = QHBoxLayout()
    for number, group in enumerate(groups):
        if number:
            row.addSpacing(BUTTON_GROUP_GAP)
        for widget in group:
            row.addWidget(widget)
    row.addStretch(1)
    close = QPushButton("Close")
    close.clicked.connect(dialog.reject)
    row.addWidget(close)
    return row
