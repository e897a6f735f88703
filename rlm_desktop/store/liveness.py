"""Who is writing a session, and whether that process is still alive.

A session is written by one process. Its row keeps the writer's pid, the pid's start time and the
host name: a pid alone can be reused after a crash, and a database on a shared folder can be
written from another machine, whose processes we cannot see (those sessions are left alone).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class Writer:
    """The identity of a writing process."""

    pid: int
    started: float
    host: str


def _start_time(pid: int) -> float | None:
    import psutil

    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return float(process.create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def current_writer() -> Writer:
    """This process."""
    pid = os.getpid()
    return Writer(pid=pid, started=_start_time(pid) or 0.0, host=socket.gethostname())


def writer_is_dead(pid: object, started: object, host: object) -> bool:
    """True when the writer is known to be gone: same host, and no live process with that start.

    The three come from a database row, which may be someone else's: a pid that is no whole
    number names no process (the writer is taken as gone), a start that is no number is not
    compared."""
    if host is not None and host != socket.gethostname():
        return False
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return True
    actual = _start_time(pid)
    if actual is None:
        return True
    return isinstance(started, int | float) and abs(actual - started) > 0.5
