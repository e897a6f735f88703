"""The shared qasync loop fixture runs tasks under pytest-qt and leaves Qt and asyncio clean."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.qt_fixtures import close_qloop, open_qloop


def test_a_closed_qloop_leaves_qt_and_asyncio_as_they_were(
    qapp: QApplication, qtbot: QtBot
) -> None:
    loop = open_qloop(qapp)
    done = asyncio.ensure_future(asyncio.sleep(0.01, result=7))
    forever = asyncio.ensure_future(asyncio.sleep(3600))
    qtbot.waitUntil(done.done, timeout=5000)
    assert done.result() == 7

    close_qloop(loop, qapp)

    assert forever.cancelled()
    assert loop.is_closed()
    with pytest.raises(RuntimeError, match="no running event loop"):
        asyncio.get_running_loop()
    timer = QTimer()
    timer.setSingleShot(True)
    with qtbot.waitSignal(timer.timeout, timeout=5000):  # Qt's own event loops still wait
        timer.start(50)
    assert asyncio.run(asyncio.sleep(0, result="fresh")) == "fresh"
