"""Compare shows both runs' columns, each getting half, on a 1024×640 screen and on 2560×1440 at
twice the scale (1280×720 in the window's own pixels): the Left and the Right values of the
settings and figures table, and the two runs' trees and timelines below."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QTableWidget
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.window.main_window import MainWindow
from tests.ui.test_compare_window import _record_lasting

SIZES = {"1024x640": (1024, 640), "2560x1440 at 2x": (1280, 720)}


def _in_view(table: QTableWidget, column: int) -> bool:
    start = table.columnViewportPosition(column)
    return start >= 0 and start + table.columnWidth(column) <= table.viewport().width()


@pytest.mark.parametrize("size", list(SIZES))
def test_both_runs_columns_show_each_getting_half(
    size: str, window: MainWindow, qtbot: QtBot
) -> None:
    _record_lasting("quick-run", 3.0, 1_700_000_000.0)
    _record_lasting("slow-run", 30.0, 1_700_001_000.0)
    dialog = window.compare_sessions("quick-run", "slow-run")
    dialog.resize(*SIZES[size])
    qtbot.waitExposed(dialog)
    qtbot.waitUntil(lambda: dialog.table.viewport().width() > 0)
    table = dialog.table
    assert [table.horizontalHeaderItem(c).text() for c in (1, 2)] == ["Left", "Right"]
    assert _in_view(table, 1), "the Left column is cut off"
    assert _in_view(table, 2), "the Right column is cut off"
    assert abs(table.columnWidth(1) - table.columnWidth(2)) <= 2
    values = table.columnWidth(1) + table.columnWidth(2)
    assert values >= table.viewport().width() / 2  # the runs' values get the room, not the names
    assert table.item(2, 2).text()  # a Right value is there to read
    left, right = dialog.left, dialog.right
    assert left.isVisible()
    assert right.isVisible()
    assert left.width() >= 300
    assert abs(left.width() - right.width()) <= 8
