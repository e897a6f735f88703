"""Small pieces several parts of the window are built from: tool buttons, search boxes, and a
timer that waits for typing to settle."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, SignalInstance
from PySide6.QtWidgets import QLineEdit, QToolButton


def tool_button(text: str, tip: str, slot: Callable[[], object]) -> QToolButton:
    """A flat button for a pane's tools, named for screen readers by its text."""
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
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
