"""The parent's side of the worker launcher: one warm process per run that forks REPL workers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import struct
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rlm_desktop.engine.config import (
    DEFAULT_MAX_TASKS,
    DEFAULT_MEMORY_LIMIT_MB,
    DEFAULT_SCRATCH_QUOTA_MB,
)
from rlm_desktop.engine.sandbox.connection import (
    STREAM_LIMIT,
    WorkerConnection,
    WorkerDied,
    start_once,
)
from rlm_desktop.engine.sandbox.environment import worker_environment
from rlm_desktop.engine.sandbox.kernel import seatbelt
from rlm_desktop.engine.sandbox.kernel.hardening import protect_application_process
from rlm_desktop.engine.sandbox.kernel.run_bounds import SharedBounds, make_shared_bounds
from rlm_desktop.engine.sandbox.kernel.worker_handle import WorkerHandle
from rlm_desktop.engine.sandbox.level import MIB, SandboxReport, sandbox_spec
from rlm_desktop.engine.sandbox.scratch_quota import ScratchWatch, megabytes
from rlm_desktop.engine.sandbox.worker.launch import FROZEN_LAUNCHER_FLAG

WORKER_SCRIPT = Path(__file__).resolve().parent.parent / "worker" / "__main__.py"


def launcher_command(control_fd: int) -> list[str]:
    """The command that starts the launcher with its control socket at `control_fd`.

    Installed from source or a wheel: this Python runs worker/__main__.py by path, isolated
    (`-I -S`). In a frozen bundle (PyInstaller's `sys.frozen`) `sys.executable` is the app itself,
    whose entry point hands `--repl-launcher FD` to worker.launch.main on the bundle's interpreter,
    with the standard library and numpy bundled for model code (packaging/bundle_entry.py).
    """
    if getattr(sys, "frozen", False):
        return [sys.executable, FROZEN_LAUNCHER_FLAG, str(control_fd)]
    return [sys.executable, "-I", "-S", str(WORKER_SCRIPT), "--launcher", str(control_fd)]


def bundle_folders() -> list[str]:
    """What a frozen bundle's launcher reads besides `sys.prefix`: the executable's folder (its
    archive of compiled modules is appended to the executable), or a macOS app's `Contents`.
    Nothing when not frozen."""
    if not getattr(sys, "frozen", False):
        return []
    folder = Path(sys.executable).resolve().parent
    return [str(folder.parent if folder.name == "MacOS" else folder)]


_UCRED = struct.Struct("=iII")  # struct ucred: pid, uid, gid


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Launcher:
    """Starts the launcher lazily and asks it for workers; each comes with its own socket.

    The launcher confines itself (confine.py) before it forks any worker: `allow_read` are the
    folders model code may read besides Python's own, `max_tasks` caps its processes and threads,
    and `memory_limit_mb` their memory together, where the system gives the run a cgroup
    (run_bounds.py). The files model code writes in the scratch folder take at most
    `scratch_quota_mb`: a tmpfs of that size where the sandbox has a mount namespace, else the
    folder on disk is checked (scratch_quota.py) and `on_over_quota(reason)` is asked to stop
    the run's workers when they pass it. `sandbox=False` (benchmarks only) leaves it unconfined,
    reported as `none`.
    """

    def __init__(
        self,
        scratch_dir: Path,
        output_cap_chars: int,
        *,
        allow_read: Sequence[str] = (),
        max_tasks: int = DEFAULT_MAX_TASKS,
        memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
        scratch_quota_mb: int = DEFAULT_SCRATCH_QUOTA_MB,
        on_over_quota: Callable[[str], None] | None = None,
        sandbox: bool = True,
    ) -> None:
        self._scratch = scratch_dir
        self._quota_mb = scratch_quota_mb
        self._on_over_quota = on_over_quota
        self._watch: ScratchWatch | None = None
        self._confine = sandbox
        self._output_cap = output_cap_chars
        self._allow_read = tuple(allow_read)
        self._max_tasks = max_tasks
        self._memory_bytes = memory_limit_mb * 2**20 if memory_limit_mb else None
        self._bounds: SharedBounds | None = None
        self.sandbox: SandboxReport | None = None
        """The sandbox the launcher reported, once it has started."""
        self._control: socket.socket | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    async def spawn(self, cwd: Path) -> WorkerConnection:
        """A new worker process working in `cwd`, held by a pidfd where the system has them,
        speaking over a socket of its own.

        A launcher that has died is started afresh once; a second failure is raised.
        """
        async with self._lock:
            try:
                pid, sock = await self._spawn_once(cwd)
            except (OSError, WorkerDied):
                pid, sock = await self._spawn_once(cwd)
        control = WorkerHandle(pid)
        reader, writer = await asyncio.open_unix_connection(sock=sock, limit=STREAM_LIMIT)
        return WorkerConnection(control, reader, writer)

    async def _spawn_once(self, cwd: Path) -> tuple[int, socket.socket]:
        try:
            if self._control is None:
                await self._start()
            return await self._request(cwd)
        except (OSError, WorkerDied):
            await self.close()
            raise

    async def start(self) -> SandboxReport:
        """Start the launcher now (if it is not running) and return the sandbox it reported."""
        async with self._lock:
            await start_once(
                lambda: self._control is not None, self._start, self.close, (OSError, WorkerDied)
            )
            assert self.sandbox is not None
            return self.sandbox

    async def _start(self) -> None:
        protect_application_process()
        self._scratch.mkdir(parents=True, exist_ok=True)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        if hasattr(socket, "SO_PASSCRED"):
            # Every message then carries its sender's pid as this process sees it.
            ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        env = worker_environment(self._scratch, self._output_cap)
        command = launcher_command(theirs.fileno())
        if self._confine:
            self._bounds = make_shared_bounds(self._memory_bytes, self._max_tasks)
            procs = self._bounds.procs_files if self._bounds is not None else ()
            spec = sandbox_spec(
                self._scratch, self._allow_read, self._max_tasks, procs, self._quota_mb * MIB
            )
            spec["read"] += bundle_folders()
            if seatbelt.applies(sys.platform):
                spec["outer"] = seatbelt.LEVEL
                command = seatbelt.seatbelt_command(command, spec)
            env["RLM_SANDBOX"] = json.dumps(spec)
        self._control = ours
        try:
            self._process = await asyncio.create_subprocess_exec(
                *command,
                pass_fds=[theirs.fileno()],
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                cwd=self._scratch,
                env=env,
                start_new_session=True,
            )
        finally:
            theirs.close()
        message, _ = await self._receive()
        self.sandbox = SandboxReport.from_message(message.get("sandbox", {}))
        if not self.sandbox.scratch_in_memory:
            self._watch = ScratchWatch(
                self._scratch, self._quota_mb * MIB, self._over_quota, self._lock
            )
            self._watch.start()

    def _over_quota(self, reason: str) -> None:
        if self._on_over_quota is not None:
            self._on_over_quota(reason)

    def _file_bytes(self) -> int:
        """The largest file a worker may write: the quota in memory, else the run's allowance
        on the disk."""
        return self._watch.allowance if self._watch is not None else self._quota_mb * MIB

    def _room(self) -> str:
        """How much model code's files may take, as a worker's note says it."""
        if self._watch is not None:
            return self._watch.room()
        return f"at most {megabytes(self._quota_mb * MIB)} (setting scratch_quota_mb)"

    async def _request(self, cwd: Path) -> tuple[int, socket.socket]:
        assert self._control is not None
        parent_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            request = {
                "cwd": str(cwd),
                "file_bytes": self._file_bytes(),
                "room": self._room(),
            }
            socket.send_fds(self._control, [json.dumps(request).encode()], [worker_end.fileno()])
        finally:
            worker_end.close()
        try:
            reply, sender = await self._receive()
        except WorkerDied:
            parent_end.close()
            raise
        if "pid" not in reply:
            parent_end.close()
            raise WorkerDied(str(reply.get("error", "the launcher sent no worker")))
        # The worker itself sends the reply: its pid as the kernel reports it to us is right even
        # when the worker runs in a PID namespace of its own.
        return (sender or int(reply["pid"])), parent_end

    async def _receive(self) -> tuple[dict[str, Any], int | None]:
        """One message from the control socket and its sender's pid (None if the kernel gave none)."""
        control = self._control
        assert control is not None
        loop = asyncio.get_running_loop()
        fd = control.fileno()
        while True:
            try:
                data, ancillary, _flags, _address = control.recvmsg(
                    65536, socket.CMSG_SPACE(_UCRED.size)
                )
                break
            except BlockingIOError:
                ready = loop.create_future()
                loop.add_reader(fd, _settle, ready)
                try:
                    await ready
                finally:
                    loop.remove_reader(fd)
        if not data:
            raise WorkerDied("the worker launcher exited")
        sender = None
        for level, kind, payload in ancillary:
            credentials = getattr(socket, "SCM_CREDENTIALS", None)
            if level == socket.SOL_SOCKET and kind == credentials and len(payload) >= _UCRED.size:
                sender = _UCRED.unpack(payload[: _UCRED.size])[0] or None
        message: dict[str, Any] = json.loads(data)
        return message, sender

    async def close(self) -> None:
        """Stop the launcher; in a PID namespace every process of the run ends with it (elsewhere
        the workers it forked are killed by their owners)."""
        control, self._control = self._control, None
        if control is not None:
            control.close()
        watch, self._watch = self._watch, None
        if watch is not None:
            await watch.close()
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
        bounds, self._bounds = self._bounds, None
        if bounds is not None:
            await asyncio.to_thread(bounds.remove)


async def probe_sandbox(scratch_root: Path) -> SandboxReport:
    """The sandbox this machine gives model code: a launcher started in a temporary folder under
    `scratch_root` reports it, then ends (about 40 ms). Raises OSError or WorkerDied if the
    launcher cannot start."""
    with tempfile.TemporaryDirectory(prefix="probe-", dir=scratch_root) as folder:
        launcher = Launcher(Path(folder), 1000)
        try:
            return await launcher.start()
        finally:
            await launcher.close()
