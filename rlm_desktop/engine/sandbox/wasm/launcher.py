"""The app's side of the wasm sandbox: one host process per run, one guest per REPL worker.

The host is spawned with pipes (subprocess: no fork, no Unix socket, no signal), the same on
Windows, macOS and Linux. A thread reads its stdout and hands each envelope to the event loop;
another writes what the workers send, so a 100 MB context never blocks the loop. Each guest's
stream reaches `WorkerProcess` as an asyncio stream, exactly as a kernel worker's socket does:
the frames, their checks and their limits are the same code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path, PurePath, PureWindowsPath
from typing import Any, BinaryIO

from rlm_desktop.engine.config import DEFAULT_MEMORY_LIMIT_MB, DEFAULT_SCRATCH_QUOTA_MB
from rlm_desktop.engine.sandbox.connection import (
    STREAM_LIMIT,
    WorkerConnection,
    WorkerDied,
    start_once,
)
from rlm_desktop.engine.sandbox.environment import worker_environment
from rlm_desktop.engine.sandbox.level import MIB, SandboxReport
from rlm_desktop.engine.sandbox.scratch_quota import ScratchWatch
from rlm_desktop.engine.sandbox.wasm.envelope import CHUNK, CONTROL, control, pack, read_envelope

FROZEN_HOST_FLAG = "--wasm-host"
"""How a frozen bundle starts itself as the wasm host (packaging/bundle_entry.py)."""
HOST_MODULE = "rlm_desktop.engine.sandbox.wasm.host"
HIGH_WATER = 4 << 20
"""Bytes queued for the host past which a worker's `drain` waits."""
START_TIMEOUT_S = 600.0
"""How long the host may take to start: compiling the guest for a new machine takes seconds."""


def host_command(cache_dir: Path) -> list[str]:
    """The host's command line: this Python running host.py isolated (`-I`), or a frozen
    bundle starting itself with `--wasm-host`."""
    if getattr(sys, "frozen", False):
        return [sys.executable, FROZEN_HOST_FLAG, str(cache_dir)]
    return [sys.executable, "-I", "-m", HOST_MODULE, str(cache_dir)]


def guest_path(path: str) -> str:
    """Where a folder of this machine appears in the guest: its own path on POSIX systems;
    `C:\\Users\\ana` as `/c/Users/ana` (WASI paths have no drive letters)."""
    windows = PureWindowsPath(path)
    if windows.drive and len(windows.drive) == 2:
        rest = "/".join(windows.parts[1:])
        return f"/{windows.drive[0].lower()}/{rest}".rstrip("/")
    return PurePath(path).as_posix()


def _spawn_host(
    cache_dir: Path, scratch_dir: Path, output_cap_chars: int
) -> subprocess.Popen[bytes]:
    """Start the host with pipes for its stdin and stdout (its stderr is dropped), in the
    scratch folder, with a worker's environment (no API key reaches it); no console window on
    Windows."""
    _make_folders(scratch_dir)
    return subprocess.Popen(
        host_command(cache_dir),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=scratch_dir,
        env=worker_environment(scratch_dir, output_cap_chars),
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
    )


def _make_folders(scratch_dir: Path) -> None:
    (scratch_dir / "tmp").mkdir(parents=True, exist_ok=True)


class GuestControl:
    """A guest as a worker's control: `pid` is its number in the host."""

    interrupt_keeps_state = False

    def __init__(self, launcher: WasmLauncher, number: int) -> None:
        self.pid = number
        self._launcher = launcher
        self.ended = False
        self.discarding = False
        """Set once the app stopped the guest: what it still sends is dropped unread."""
        self.reason: str | None = None

    def alive(self) -> bool:
        return not self.ended

    def interrupt(self) -> None:
        """The guest traps at the host's next epoch tick; its variables are lost."""
        if not self.ended:
            self._launcher.order("interrupt", self.pid)

    def kill(self) -> None:
        self.discarding = True
        self._launcher.resume()
        if not self.ended:
            self._launcher.order("end", self.pid)

    def close(self) -> None:
        pass

    def ended_because(self) -> str | None:
        if self.reason is None or self.reason == "interrupted":
            return None
        return f"the REPL's WebAssembly Python stopped ({self.reason}); its variables are lost"


class PipePause(asyncio.BaseTransport):
    """What a guest's stream reader pauses when model code sends faster than the app reads: the
    thread that reads the host's pipe waits (the host, then the guest, wait behind it), as a
    socket's buffer holds a kernel worker back."""

    def __init__(self, flowing: threading.Event) -> None:
        super().__init__()
        self._flowing = flowing

    def pause_reading(self) -> None:
        self._flowing.clear()

    def resume_reading(self) -> None:
        self._flowing.set()


class GuestWriter:
    """A worker's stream to its guest, sent through the host in envelopes."""

    def __init__(self, launcher: WasmLauncher, number: int) -> None:
        self._launcher = launcher
        self._number = number
        self._closing = False

    def write(self, data: bytes) -> None:
        if self._closing:
            return
        for start in range(0, len(data), CHUNK):
            self._launcher.send(pack(self._number, data[start : start + CHUNK]))

    async def drain(self) -> None:
        await self._launcher.drained()

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._launcher.order("end", self._number)

    def is_closing(self) -> bool:
        return self._closing or self._launcher.gone


class WasmLauncher:
    """Starts the run's host process lazily and a guest in it for each worker.

    `cache_dir` keeps the guest compiled for this machine; `on_preparing(message)` hears when the
    host compiles it (seconds, once per machine and version). Memory is bounded per guest
    (`memory_limit_mb`); files in the scratch folder are checked against `scratch_quota_mb` as a
    kernel launcher without a mount namespace checks them (scratch_quota.py). `allow_read` are
    folders the guests may read (read-only, at `guest_path`).
    """

    def __init__(
        self,
        scratch_dir: Path,
        output_cap_chars: int,
        *,
        cache_dir: Path,
        allow_read: Sequence[str] = (),
        memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
        scratch_quota_mb: int = DEFAULT_SCRATCH_QUOTA_MB,
        on_over_quota: Callable[[str], None] | None = None,
        on_preparing: Callable[[str], None] | None = None,
    ) -> None:
        self._scratch = scratch_dir
        self._output_cap = output_cap_chars
        self._cache = cache_dir
        self._allow_read = tuple(allow_read)
        self._memory_bytes = memory_limit_mb * MIB if memory_limit_mb else None
        self._quota_mb = scratch_quota_mb
        self._on_over_quota = on_over_quota
        self._on_preparing = on_preparing
        self._lock = asyncio.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._outgoing: queue.Queue[bytes | None] = queue.Queue()
        self._unsent = 0
        self._unsent_lock = threading.Lock()
        self._drained: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready: asyncio.Future[dict[str, Any]] | None = None
        self._guests: dict[int, tuple[GuestControl, asyncio.StreamReader]] = {}
        self._flowing = threading.Event()
        self._flowing.set()
        self._numbers = 0
        self._watch: ScratchWatch | None = None
        self.gone = False
        self.sandbox: SandboxReport | None = None

    async def start(self) -> SandboxReport:
        """Start the host now (if it is not running) and return the sandbox it reported."""
        async with self._lock:
            await start_once(
                lambda: self._process is not None, self._start, self._stop, (OSError, WorkerDied)
            )
            assert self.sandbox is not None
            return self.sandbox

    async def spawn(self, cwd: Path) -> WorkerConnection:
        """A new guest working in `cwd` (its scratch folder, seen as /scratch)."""
        await self.start()
        async with self._lock:
            if self.gone:
                raise WorkerDied("the wasm sandbox's host process exited")
            self._numbers += 1
            number = self._numbers
            control_ = GuestControl(self, number)
            reader = asyncio.StreamReader(limit=STREAM_LIMIT)
            reader.set_transport(PipePause(self._flowing))
            self._guests[number] = (control_, reader)
            _make_folders(cwd)
            self.order(
                "spawn",
                number,
                cwd=str(cwd),
                memory_bytes=self._memory_bytes,
                env={"RLM_WORKER_OUTPUT_CAP": str(self._output_cap)},
                read=[[folder, guest_path(folder)] for folder in self._allow_read],
            )
        return WorkerConnection(control_, reader, GuestWriter(self, number))

    async def _start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._drained = asyncio.Event()
        self._drained.set()
        self._ready = self._loop.create_future()
        self.gone = False
        self._process = _spawn_host(self._cache, self._scratch, self._output_cap)
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        threading.Thread(
            target=self._read, args=(self._process.stdout,), name="wasm-host-reader", daemon=True
        ).start()
        threading.Thread(
            target=self._write, args=(self._process.stdin,), name="wasm-host-writer", daemon=True
        ).start()
        message = await asyncio.wait_for(asyncio.shield(self._ready), START_TIMEOUT_S)
        self.sandbox = SandboxReport.from_message(message.get("sandbox", {}))
        self._watch = ScratchWatch(
            self._scratch, self._quota_mb * MIB, self._over_quota, self._lock
        )
        self._watch.start()

    def _over_quota(self, reason: str) -> None:
        if self._on_over_quota is not None:
            self._on_over_quota(reason)

    def resume(self) -> None:
        """Let the pipe flow again (a stopped guest's data is dropped unread)."""
        self._flowing.set()

    def order(self, op: str, number: int, **details: Any) -> None:
        """Send the host a control message about guest `number`."""
        self.send(control({"op": op, "guest": number, **details}))

    def send(self, envelope: bytes) -> None:
        """Queue an envelope for the host (the writer thread sends it)."""
        if self.gone:
            return
        with self._unsent_lock:
            self._unsent += len(envelope)
            if self._unsent > HIGH_WATER and self._drained is not None:
                self._drained.clear()
        self._outgoing.put(envelope)

    async def drained(self) -> None:
        """Wait while more than `HIGH_WATER` bytes are queued for the host."""
        if self._drained is not None:
            await self._drained.wait()

    def _write(self, stream: BinaryIO) -> None:
        while (envelope := self._outgoing.get()) is not None:
            try:
                stream.write(envelope)
                stream.flush()
            except (OSError, ValueError):
                break
            with self._unsent_lock:
                self._unsent -= len(envelope)
                low = self._unsent <= HIGH_WATER
            if low:
                self._call_soon(self._set_drained)
        with contextlib.suppress(OSError, ValueError):
            stream.close()

    def _set_drained(self) -> None:
        if self._drained is not None:
            self._drained.set()

    def _read(self, stream: BinaryIO) -> None:
        while (envelope := read_envelope(stream)) is not None:
            self._call_soon(self._arrived, *envelope)
            while not self._flowing.wait(1.0) and not self.gone:
                pass
        self._call_soon(self._host_exited)

    def _call_soon(self, callback: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(callback, *args)

    def _arrived(self, number: int, body: bytes) -> None:
        if number != CONTROL:
            guest = self._guests.get(number)
            if guest is not None and not (guest[0].ended or guest[0].discarding):
                guest[1].feed_data(body)
            return
        message = json.loads(body)
        event = message.get("event")
        if event == "ready" and self._ready is not None and not self._ready.done():
            self._ready.set_result(message)
        elif event == "failed" and self._ready is not None and not self._ready.done():
            self._ready.set_exception(
                WorkerDied(f"the wasm sandbox could not start: {message.get('error')}")
            )
        elif event == "compiling" and self._on_preparing is not None:
            self._on_preparing(
                "Preparing the WebAssembly sandbox for this machine (once per version; "
                "a few seconds)"
            )
        elif event == "ended":
            self._ended(message.get("guest"), message.get("reason"))

    def _ended(self, number: Any, reason: Any) -> None:
        guest = self._guests.pop(number, None) if isinstance(number, int) else None
        if guest is None:
            return
        control_, reader = guest
        control_.ended = True
        control_.reason = str(reason) if reason is not None else None
        reader.feed_eof()
        self._flowing.set()  # a reader that ended reads no more: nothing waits on it

    def _host_exited(self) -> None:
        self.gone = True
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(WorkerDied("the wasm sandbox's host process exited"))
        for number in list(self._guests):
            self._ended(number, "its host process exited")
        self._set_drained()

    async def close(self) -> None:
        """Stop the host: every guest ends with it."""
        async with self._lock:
            await self._stop()

    async def _stop(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            await watch.close()
        process, self._process = self._process, None
        if process is None:
            return
        self._outgoing.put(None)  # the host ends when its stdin closes
        try:
            await asyncio.to_thread(process.wait, 5.0)
        except subprocess.TimeoutExpired:
            process.kill()
            await asyncio.to_thread(process.wait)
        self.gone = True
        self._outgoing = queue.Queue()
        with self._unsent_lock:
            self._unsent = 0
