"""The documents' reader and the processes it starts, held to their bounds on every platform.

Linux and macOS: the reader leads a process group of its own, so one kill stops it and every
process it started (pypdf's page workers). Linux also enforces the address-space limit
(RLIMIT_AS) the reader sets itself, which the processes it starts inherit: an allocation past it
fails, and the reader says so.

macOS accepts that limit but does not enforce it, and Windows has neither groups nor the limit.
There (and wherever `RLM_DESKTOP_PORTABLE` forces the portable path) the application watches the
reader while it reads: every `WATCH_INTERVAL_S` it sums the resident memory of the reader and of
every process it started (psutil), and stops them all once the sum passes the bound; they are
stopped by suspending the reader, so it starts nothing more, then killing it and all it started.
The watch reacts rather than refuses: a fast allocation can pass the bound by what it allocates
in one interval.
"""

from __future__ import annotations

import contextlib
import os
import sys

import psutil

from rlm_desktop import portability

WATCH_INTERVAL_S = 0.05
_bound: int | None = None
"""The bound this process (the reader) was given, once `bound_this_process` ran."""


def kernel_bounds_memory() -> bool:
    """True where the reader's address-space limit is enforced by the kernel (Linux)."""
    return sys.platform.startswith("linux") and not portability.forced()


def process_groups() -> bool:
    """True where the reader can lead a process group and be killed with all it started."""
    return portability.has(os, "setsid") and portability.has(os, "killpg")


def bound_this_process(limit: int) -> None:
    """In the reader, before its first request: limit its address space to `limit` where the
    kernel enforces that; `process_bound` reports `limit` from now on either way."""
    global _bound
    _bound = limit
    if not kernel_bounds_memory():
        return
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def process_bound() -> int | None:
    """The memory this process may use: its address-space limit where it has one, else the bound
    the application watches it to (`bound_this_process`), else None."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, ValueError, OSError):
        return _bound
    return _bound if soft == resource.RLIM_INFINITY else soft


class ReaderTree:
    """A reader process (by pid) and every process it started, seen from the application."""

    def __init__(self, pid: int) -> None:
        self._process = psutil.Process(pid)

    def _members(self) -> list[psutil.Process]:
        try:
            return [self._process, *self._process.children(recursive=True)]
        except psutil.Error:  # the reader is gone: what it started is no longer its own
            return []

    def resident_bytes(self) -> int:
        """The memory the reader and every process it started hold now."""
        total = 0
        for member in self._members():
            with contextlib.suppress(psutil.Error):  # one that ended meanwhile holds nothing
                total += member.memory_info().rss
        return total

    def kill(self) -> None:
        """Stop the reader and every process it started, now."""
        with contextlib.suppress(psutil.Error):
            self._process.suspend()  # starts nothing more while its tree is listed
        for member in self._members():
            with contextlib.suppress(psutil.Error):
                member.kill()
