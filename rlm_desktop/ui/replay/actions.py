"""The Replay menu's actions, with their keys; enabled only while a saved session is in view.

Every slot is a bound method of a Qt object, never a closure: a closure that holds the window's
objects can keep them for Python's garbage collector, which may free them from another thread.
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from rlm_desktop.ui.replay.controller import ReplayController
from rlm_desktop.ui.shared.actions import window_action


def replay_actions(window: QWidget, controller: ReplayController) -> list[QAction]:
    """Play/pause and the four steps as actions of `window`, shown in the bar's tooltips."""
    bar = controller.bar
    actions = [
        window_action(
            window, "&Play or pause", QKeySequence("Ctrl+Space"), controller.toggle, bar.play_button
        ),
        window_action(
            window,
            "&Next event",
            QKeySequence("Alt+Right"),
            controller.next_event,
            bar.next_button,
        ),
        window_action(
            window,
            "P&revious event",
            QKeySequence("Alt+Left"),
            controller.previous_event,
            bar.previous_button,
        ),
        window_action(
            window,
            "Next &turn",
            QKeySequence("Alt+PgDown"),
            controller.next_turn,
            bar.next_turn_button,
        ),
        window_action(
            window,
            "Previous t&urn",
            QKeySequence("Alt+PgUp"),
            controller.previous_turn,
            bar.previous_turn_button,
        ),
    ]
    for action in actions:
        action.setEnabled(controller.player is not None)
        controller.available.connect(action.setEnabled)
    return actions
