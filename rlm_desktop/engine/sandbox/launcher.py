"""The parent's side of the worker launcher: one warm process per run that forks REPL workers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from pathlib import Path

from rlm_desktop.engine.sandbox.environment import worker_environment
from rlm_desktop.engine.sandbox.hardening import protect_application_process

WORKER_SCRIPT = Path(__file__).with_name("worker.py")


class WorkerDied(Exception):
    """A worker (or the launcher) exited while it was needed."""


class Launcher:
    """Starts the launcher lazily and asks it for workers; each comes with its own socket."""

    def __init__(self, scratch_dir: Path, output_cap_chars: int) -> None:
        self._scratch = scratch_dir
        self._output_cap = output_cap_chars
        self._control: socket.socket | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    async def spawn(self, cwd: Path) -> tuple[int, socket.socket]:
        """A new worker process working in `cwd`: its pid and the parent's end of its socket.

        A launcher that has died is started afresh once; a second failure is raised.
        """
        async with self._lock:
            with contextlib.suppress(OSError, WorkerDied):
                return await self._spawn_once(cwd)
            return await self._spawn_once(cwd)

    async def _spawn_once(self, cwd: Path) -> tuple[int, socket.socket]:
        try:
            if self._control is None:
                await self._start()
            return await self._request(cwd)
        except (OSError, WorkerDied):
            await self.close()
            raise

    async def _start(self) -> None:
        protect_application_process()
        self._scratch.mkdir(parents=True, exist_ok=True)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        self._control = ours
        try:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                "-S",
                str(WORKER_SCRIPT),
                "--launcher",
                str(theirs.fileno()),
                pass_fds=[theirs.fileno()],
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                cwd=self._scratch,
                env=worker_environment(self._scratch, self._output_cap),
                start_new_session=True,
            )
        finally:
            theirs.close()

    async def _request(self, cwd: Path) -> tuple[int, socket.socket]:
        assert self._control is not None
        parent_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            socket.send_fds(
                self._control, [json.dumps({"cwd": str(cwd)}).encode()], [worker_end.fileno()]
            )
        finally:
            worker_end.close()
        reply = await asyncio.get_running_loop().sock_recv(self._control, 4096)
        if not reply:
            parent_end.close()
            raise WorkerDied("the worker launcher exited")
        return int(json.loads(reply)["pid"]), parent_end

    async def close(self) -> None:
        """Stop the launcher (workers it forked are killed by their owners)."""
        control, self._control = self._control, None
        if control is not None:
            control.close()
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
