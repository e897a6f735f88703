"""UI fixtures: the qasync loop and the main window (shared with the UI benchmarks), and a check
that no test leaves a worker process or thread behind."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psutil
import pytest
from PySide6.QtWidgets import QApplication

from tests.qt_fixtures import qloop as qloop
from tests.qt_fixtures import window as window


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
