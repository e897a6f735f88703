"""The WebAssembly guest's entry: the worker's REPL (package `rlm_worker`) served over the host's
two functions instead of a socket, on one thread and without signals (serve.serve_in_turn).

Built into a component by build.py; the modules imported here (and by `stdlib`) are the ones the
component carries: the rest of the standard library is not in it.
"""

import os
import time

import missing
import stdlib  # noqa: F401  (what model code may import)
import wit_world
from rlm_worker.channel import Channel
from rlm_worker.serve import serve_in_turn
from wit_world.imports import host


class HostReader:
    """The incoming stream, read in the sizes the channel asks for. The pieces the host hands
    over are joined once per read: a 100 MB context is copied as few times as can be."""

    def __init__(self) -> None:
        self._pieces: list[bytes] = []
        self._have = 0
        self._closed = False

    def read(self, size: int) -> bytes:
        while self._have < size and not self._closed:
            piece = host.receive()
            if piece is None:
                self._closed = True
            else:
                self._pieces.append(piece.encode("latin-1"))
                self._have += len(self._pieces[-1])
        data = self._pieces[0] if len(self._pieces) == 1 else b"".join(self._pieces)
        self._pieces.clear()
        if len(data) > size:
            self._pieces.append(data[size:])
            data = data[:size]
        self._have = len(self._pieces[0]) if self._pieces else 0
        return data


class HostWriter:
    """The outgoing stream: each write goes to the host at once."""

    def write(self, data: bytes) -> int:
        host.send(bytes(data).decode("latin-1"))
        return len(data)

    def flush(self) -> None:
        pass


SLEEP_STEP_S = 0.05
"""A sleep is taken in steps this long: the host stops a guest only while its code runs."""
_sleep = time.sleep


def sleep_in_steps(seconds: float) -> None:
    """`time.sleep`, in short steps, so that a cell past its time limit (or a cancelled run)
    is stopped within a step rather than when a long sleep ends."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        _sleep(min(left, SLEEP_STEP_S))


time.sleep = sleep_in_steps


class WitWorld(wit_world.WitWorld):
    def serve(self) -> None:
        scratch = os.environ.get("RLM_SCRATCH")
        if scratch:
            os.chdir(scratch)
        missing.install()
        serve_in_turn(Channel(HostReader(), HostWriter()))
