"""A worker process the app signals by a handle on the process itself, never by its number alone.

A worker's pid is a number the kernel hands to another process once the worker has exited (and
the launcher reaps at once). Model code can make its worker exit while a child of its own keeps
the worker's socket open, then watch for the number to be reused: the app, signalling "the
worker" by number, would kill a process of the user's. A pidfd (Linux 5.3+) names the process,
not the number: a signal sent through it reaches the worker or nothing. Elsewhere (macOS) the
number is all there is.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal


class WorkerHandle:
    """The worker `pid` as the app sees it, held by a pidfd where the system has them."""

    interrupt_keeps_state = True

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._fd: int | None = None
        with contextlib.suppress(AttributeError, OSError):  # no pidfd_open, or it is gone
            self._fd = os.pidfd_open(pid)

    def alive(self) -> bool:
        """True while the process has not exited (a pidfd turns readable when it does)."""
        if self._fd is None:
            import psutil

            return bool(psutil.pid_exists(self.pid))
        readable, _, _ = select.select([self._fd], [], [], 0)
        return not readable

    def signal(self, signum: int) -> None:
        """Send `signum` to the worker, if it is still this process."""
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            if self._fd is not None:
                signal.pidfd_send_signal(self._fd, signum)
            else:
                os.kill(self.pid, signum)

    def interrupt(self) -> None:
        """SIGINT: the cell in progress raises `Interrupted` (the cell time limit struck)."""
        self.signal(signal.SIGINT)

    def kill(self) -> None:
        """End the worker and its process group at once (`kill_group`)."""
        self.kill_group()

    def ended_because(self) -> str | None:
        """A process's end says nothing of why: None."""
        return None

    def kill_group(self) -> None:
        """SIGKILL the worker and its process group (what it started and did not move out of
        it), only while the worker lives: the group's number is the worker's pid, and once the
        worker has exited that number may be another's. Processes that left the group end with
        the run (its PID namespace or cgroup)."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        self.signal(signal.SIGKILL)

    def close(self) -> None:
        """Let go of the pidfd."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
