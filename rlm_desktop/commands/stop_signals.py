"""Ctrl-C and a polite kill stop a command's run, on every platform.

Where the event loop takes POSIX signal handlers (Linux, macOS), it is given them. Windows' event
loops take none (`add_signal_handler` raises NotImplementedError): there Python's own handler
(`signal.signal`), which runs in the main thread between two bytecodes, hands the stop to the loop
with `call_soon_threadsafe`, and Ctrl-Break (`SIGBREAK`, also sent when the console window is
closed) stops too. `RLM_DESKTOP_PORTABLE=1` takes the portable path everywhere (portability.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType

from rlm_desktop import portability

STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGBREAK") if hasattr(signal, name)
)
"""The signals that stop a run: SIGBREAK exists on Windows only."""


@contextlib.contextmanager
def stopped_by_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Inside (in the running event loop's thread), each of `STOP_SIGNALS` calls `stop` in the
    loop; on the way out the handlers that were there before are back."""
    loop = asyncio.get_running_loop()
    if not portability.forced() and _loop_handles(loop, stop):
        try:
            yield
        finally:
            for signum in STOP_SIGNALS:
                loop.remove_signal_handler(signum)
        return
    before = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}

    def handle(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        loop.call_soon_threadsafe(stop)

    for signum in STOP_SIGNALS:
        signal.signal(signum, handle)
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _loop_handles(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> bool:
    """Give `loop` a handler for each stop signal; False (none given) where it takes none."""
    try:
        for signum in STOP_SIGNALS:
            loop.add_signal_handler(signum, stop)
    except NotImplementedError:
        return False
    return True
