"""An error nothing caught leaves the window alive: in a slot, in a paint, in an asyncio task.

The real guard is installed as the app installs it; each error is written to the errors log
with its traceback, scrubbed of the keys the process holds, and the user is told once per place.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.providers import keys
from rlm_desktop.ui.window.crash_guard import CrashGuard
from rlm_desktop.ui.window.main_window import MainWindow
from tests.qt_fixtures import qloop as qloop
from tests.qt_fixtures import window as window

SECRET = "sk-test-0123456789abcdef"

pytestmark = pytest.mark.qt_no_exception_capture


@pytest.fixture
def guard(window: MainWindow, qloop: asyncio.AbstractEventLoop) -> Iterator[CrashGuard]:
    keys.set_key("openai", SECRET, session_only=True)
    guard = CrashGuard(window)
    guard.install(qloop)
    yield guard
    guard.uninstall()
    for box in list(guard.shown):
        box.close()
    keys.clear_session_keys()


class FailingPaint(QWidget):
    def paintEvent(self, event: object) -> None:  # noqa: N802 (Qt's name)
        raise TypeError(f"unsupported operand in a paint, key {SECRET}")


def test_a_slot_that_raises_is_told_once_logged_scrubbed_and_the_window_lives(
    window: MainWindow, guard: CrashGuard, qtbot: QtBot
) -> None:
    def fail() -> None:
        raise ValueError(f"the provider said: Authorization: Bearer {SECRET}")

    for _ in range(3):
        QTimer.singleShot(0, fail)
    qtbot.waitUntil(lambda: sum(guard.seen.values()) == 3)
    qtbot.waitUntil(lambda: len(guard.shown) == 1)
    (box,) = guard.shown
    assert box.isVisible()
    assert window.isVisible()
    assert "ValueError" in box.informativeText()
    assert "fail" in box.informativeText()  # the function it came from
    assert SECRET not in box.informativeText() + box.detailedText()
    logged = paths.crash_log_path().read_text(encoding="utf-8")
    assert logged.count("Traceback") == 3
    assert "[redacted]" in logged
    assert SECRET not in logged
    assert window.isEnabled()


def test_a_paint_that_fails_on_every_frame_opens_one_dialog(
    window: MainWindow, guard: CrashGuard, qtbot: QtBot
) -> None:
    failing = FailingPaint(window)
    failing.resize(40, 40)
    failing.show()
    for _ in range(4):
        failing.update()  # painted by the event loop, as the window paints
        qtbot.wait(20)
    qtbot.waitUntil(lambda: sum(guard.seen.values()) >= 4)
    qtbot.waitUntil(lambda: len(guard.shown) == 1)
    assert len(guard.seen) == 1
    assert isinstance(guard.shown[0], QMessageBox)
    assert SECRET not in paths.crash_log_path().read_text(encoding="utf-8")


def test_an_asyncio_task_that_fails_unawaited_is_recorded(
    guard: CrashGuard, qtbot: QtBot, qloop: asyncio.AbstractEventLoop
) -> None:
    async def fail_later() -> None:
        raise RuntimeError("a task nobody awaited")

    task = qloop.create_task(fail_later())
    qtbot.waitUntil(task.done)
    del task  # the loop reports an exception never retrieved when the task is collected
    gc.collect()
    qtbot.waitUntil(lambda: any("fail_later" in place for place in guard.seen))
    assert "a task nobody awaited" in paths.crash_log_path().read_text(encoding="utf-8")
