"""UI fixtures: a qasync loop on the test's QApplication, an in-memory keyring, the window."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import psutil
import pytest
import qasync
from PySide6.QtWidgets import QApplication

from tests.memory_keyring import MemoryKeyring


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop that counts as running while pytest-qt spins Qt's event loop.

    Drive it with `qtbot.waitUntil`; pytest-asyncio's own loop would not run Qt events.
    """
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    deadline = loop.time() + 5
    while any(not t.done() for t in pending) and loop.time() < deadline:
        qapp.processEvents()
    qapp.aboutToQuit.disconnect(loop._after_run_forever)
    # loop.stop() would call QApplication.exit(), which breaks later tests' event loops.
    loop._QEventLoop__is_running = False  # type: ignore[attr-defined]
    asyncio.events._set_running_loop(None)
    loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture(autouse=True)
def no_leftovers() -> Iterator[None]:
    """UI tests must not leave worker processes or threads behind."""
    me = psutil.Process()
    threads_before = {t.ident for t in threading.enumerate()}
    children_before = {p.pid for p in me.children(recursive=True)}

    def new_children() -> list[psutil.Process]:
        return [p for p in me.children(recursive=True) if p.pid not in children_before]

    yield
    deadline = 50
    while deadline and new_children():
        deadline -= 1
        QApplication.processEvents()
        threading.Event().wait(0.1)
    assert new_children() == [], "worker processes left behind"
    extra = [
        t
        for t in threading.enumerate()
        if t.ident not in threads_before and t.is_alive() and not t.daemon
    ]
    assert extra == [], f"threads left behind: {[t.name for t in extra]}"


@pytest.fixture
def window(
    qtbot: object, qloop: asyncio.AbstractEventLoop, memory_keyring: MemoryKeyring
) -> Iterator[object]:
    """The real main window, with an in-memory keyring and no start-up warm-up thread."""
    from rlm_desktop.ui.main_window import MainWindow

    win = MainWindow(warm_up=False)
    qtbot.addWidget(win)  # type: ignore[attr-defined]
    win.show()
    yield win
    if win.starter.running:
        win.starter.stop()
        qtbot.waitUntil(lambda: not win.starter.running, timeout=10_000)  # type: ignore[attr-defined]
    win.shutdown()
