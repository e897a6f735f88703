"""Qt fixtures shared by the UI tests and the UI benchmarks: the qasync loop and the main window.

Re-exported by `tests/ui/conftest.py` and `tests/benchmarks/conftest.py`; kept out of the root
conftest so that tests of the Qt-free packages never import Qt.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest
import qasync
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.bridge.main_thread_gc import MainThreadGarbageCollector
from tests.memory_keyring import MemoryKeyring

if TYPE_CHECKING:
    from rlm_desktop.ui.window.main_window import MainWindow

DRAIN_S = 5.0


async def _settled() -> None:
    """Nothing: running it lets the loop process what is left."""


def open_qloop(qapp: QApplication) -> qasync.QEventLoop:
    """A qasync loop that counts as running while pytest-qt spins Qt's event loop (see `qloop`)."""
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    return loop


def close_qloop(loop: qasync.QEventLoop, qapp: QApplication) -> None:
    """Cancel what `loop` still runs, then stop and close it, leaving Qt and asyncio as before."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    deadline = loop.time() + DRAIN_S
    while any(not task.done() for task in pending) and loop.time() < deadline:
        qapp.processEvents()
    loop.stop()
    loop.run_until_complete(_settled())
    loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop that counts as running while pytest-qt spins Qt's event loop.

    Drive it with `qtbot.waitUntil` from a plain (not async) test. pytest-asyncio's loop, even a
    qasync one from its loop-factory hook, runs an async test as a task, and asyncio refuses to
    step any other task while that one is in the middle of a step, as it is inside `waitUntil`
    ("Cannot enter into task ... while another task is being executed"). Only qasync's public
    API is used:

    - `QEventLoop(app, already_running=True)` is the loop of a Qt event loop that is already
      running, as pytest-qt's is whenever it waits;
    - at the end, tasks still pending are cancelled and given up to `DRAIN_S` to finish;
    - `stop()` marks the loop stopped. It also calls `QApplication.exit()`, which, with no Qt
      event loop running, leaves Qt's "quit now" flag set, so that every later `QEventLoop.exec()`
      (pytest-qt's `waitSignal`) would return at once;
    - `run_until_complete()` of a no-op runs `QApplication.exec()` once, which clears that flag,
      and on its way out clears asyncio's running loop, so later tests (and pytest-asyncio's
      loops) start clean;
    - `close()` releases the loop.
    """
    collector = MainThreadGarbageCollector()
    collector.start()  # as the app does: no Qt object is ever freed by a worker thread's GC
    loop = open_qloop(qapp)
    yield loop
    close_qloop(loop, qapp)
    gc.collect()
    collector.stop()


@contextmanager
def opened_window(qtbot: QtBot) -> Iterator[MainWindow]:
    """The real main window, shown, without the start-up warm-up thread; a run it still has
    at the end is stopped, then the window shuts down."""
    from rlm_desktop.ui.window.main_window import MainWindow

    win = MainWindow(warm_up=False)
    qtbot.addWidget(win)
    win.show()
    yield win
    if win.starter.running:
        win.starter.stop()
        qtbot.waitUntil(lambda: not win.starter.running, timeout=10_000)
    win.shutdown()


@pytest.fixture
def window(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, memory_keyring: MemoryKeyring
) -> Iterator[MainWindow]:
    """The real main window, with an in-memory keyring and no start-up warm-up thread."""
    with opened_window(qtbot) as win:
        yield win
