"""Blocking work the window awaits without waiting for it at exit: a daemon thread of its own
(joining a cluster, compiling the WebAssembly sandbox's guest), its outcome a future of the
running loop."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from functools import partial
from typing import TypeVar

_T = TypeVar("_T")


def in_daemon_thread(work: Callable[[], _T], name: str) -> asyncio.Future[_T]:
    """`work()` run in a daemon thread called `name`, its result a future of the running loop
    (left unsettled when the loop has closed before it ends)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()

    def run() -> None:
        try:
            result = work()
        except BaseException as error:  # handed to the awaiting task
            settle = partial(future.set_exception, error)
        else:
            settle = partial(future.set_result, result)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile (the app is ending)
            loop.call_soon_threadsafe(_settle, future, settle)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def _settle(future: asyncio.Future[_T], settle: Callable[[], None]) -> None:
    if not future.done():
        settle()
