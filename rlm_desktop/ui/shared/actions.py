"""Window-wide actions: one binding per shortcut, named in the tooltip of the button that does the same."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QAbstractButton, QWidget

Keys: TypeAlias = QKeySequence | QKeySequence.StandardKey | list[QKeySequence] | None
"""An action's shortcut: one key sequence, a platform's standard one, several, or none."""


def window_action(
    window: QWidget,
    text: str,
    keys: Keys,
    slot: Callable[[], object],
    button: QAbstractButton | None = None,
) -> QAction:
    """An action of `window` bound to `keys`; a `button` that does the same gets the keys in
    its tooltip, so each shortcut is defined once and still shown where people look."""
    action = QAction(text, window)
    if isinstance(keys, list):
        action.setShortcuts(keys)
    elif keys is not None:
        action.setShortcut(keys)
    action.setToolTip(text.replace("&", "").rstrip("…"))
    action.triggered.connect(slot)
    window.addAction(action)
    if button is not None and not action.shortcut().isEmpty():
        shortcut = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if f"({shortcut})" not in button.toolTip():
            button.setToolTip(f"{button.toolTip()} ({shortcut})")
    return action
