"""Cycles are freed on Qt's thread only, never by a worker thread that happens to allocate."""

from __future__ import annotations

import gc
import threading

from pytestqt.qtbot import QtBot

from rlm_desktop.ui.bridge.main_thread_gc import MainThreadGarbageCollector

freed_in: list[str] = []


class Cycle:
    """An object in a reference cycle that notes the thread it is freed in."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        freed_in.append(threading.current_thread().name)


def churn_in_a_worker() -> list[list[int]]:
    """Containers allocated by a worker thread, enough to pass every generation's threshold."""
    kept: list[list[int]] = []
    worker = threading.Thread(
        target=lambda: kept.extend([i] for i in range(200_000)), name="worker"
    )
    worker.start()
    worker.join()
    return kept


def test_without_the_guard_a_worker_thread_frees_the_cycle() -> None:
    freed_in.clear()
    gc.collect()
    Cycle()
    churn_in_a_worker()
    gc.collect()
    assert freed_in == ["worker"]


def test_with_the_guard_the_cycle_is_freed_on_the_main_thread(qtbot: QtBot) -> None:
    freed_in.clear()
    gc.collect()
    collector = MainThreadGarbageCollector(interval_ms=10)
    collector.start()
    try:
        assert not gc.isenabled()
        Cycle()
        allocated = churn_in_a_worker()
        assert freed_in == []
        qtbot.waitUntil(lambda: bool(freed_in), timeout=5000)
        assert freed_in == [threading.main_thread().name]
        assert len(allocated) == 200_000
    finally:
        collector.stop()
    assert gc.isenabled()
