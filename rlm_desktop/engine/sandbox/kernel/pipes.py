"""A socket pair's stand-in inside the sandbox, where seccomp refuses new Unix sockets.

Standard library only, loaded by path by confine.py in each worker. Event loops (asyncio's among
them) wake themselves through `socket.socketpair()`; `lend_pipes` makes a no-argument call fall
back on a one-way pipe, which is all a self-pipe needs, so `asyncio.run` still works.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from typing import Any


class PipeEnd:
    """One end of a pipe, with as much of a socket as an event loop's self-pipe uses."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def setblocking(self, flag: bool) -> None:
        os.set_blocking(self._fd, flag)

    def recv(self, size: int, flags: int = 0) -> bytes:
        return os.read(self._fd, size)

    def send(self, data: bytes, flags: int = 0) -> int:
        return os.write(self._fd, data)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __enter__(self) -> PipeEnd:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pipes_instead(original: Callable[..., Any]) -> Callable[..., Any]:
    def socketpair(family: Any = None, type: Any = socket.SOCK_STREAM, proto: int = 0) -> Any:
        try:
            return original(family, type, proto)
        except PermissionError:
            if family is not None or type != socket.SOCK_STREAM or proto:
                raise  # a pair asked for by kind is refused as the kernel refused it
            read, write = os.pipe2(os.O_CLOEXEC)
            return PipeEnd(read), PipeEnd(write)

    socketpair.__doc__ = (
        "A socket pair; where the sandbox refuses one, a pipe: the first end reads what the "
        "second writes (what an event loop's self-pipe needs)."
    )
    return socketpair


def lend_pipes() -> None:
    """Make `socket.socketpair()` (no arguments: an event loop's call) fall back on a one-way
    pipe where the filter refuses it."""
    socket.socketpair = _pipes_instead(socket.socketpair)
