"""Esc and Close in Settings end in the same place: what was changed is saved, and a window on
the welcome page whose provider is now set up goes on to the workspace."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.main_window import MainWindow


@pytest.mark.parametrize("how", ["Esc", "Close"])
def test_esc_and_close_both_save_and_lead_to_the_workspace(
    window: MainWindow, qtbot: QtBot, how: str
) -> None:
    assert window.pages.currentWidget() is window.welcome
    dialog = window.show_settings("defaults")
    qtbot.waitExposed(dialog)
    window.prefs.set_base_url("local", "http://127.0.0.1:9/v1")  # set up meanwhile
    dialog.defaults.fields.max_depth.setValue(4)
    if how == "Esc":
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    else:
        box = dialog.findChild(QDialogButtonBox)
        assert box is not None
        close = box.button(QDialogButtonBox.StandardButton.Close)
        assert close is not None
        qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert Preferences().run_defaults().max_depth == 4
    assert window.workspace.controls.max_depth.value() == 4
    assert window.pages.currentWidget() is window.workspace
