"""What the engine holds of a REPL worker, whichever sandbox serves it: one interface, two backends.

A launcher (the kernel sandbox's `launcher.Launcher`, the wasm sandbox's
`wasm.launcher.WasmLauncher`) starts workers; each comes as a `WorkerConnection`: a stream of the
worker protocol's frames each way (process.WorkerProcess speaks it and trusts none of it) and a
`WorkerControl` to interrupt or stop the worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from rlm_desktop.engine.sandbox.level import SandboxReport

STREAM_LIMIT = 1 << 20
"""The reader's buffer size; a frame larger than this is still read whole (up to the frame limit)."""


class WorkerDied(Exception):
    """A worker (or the sandbox that starts workers) exited while it was needed."""


class WorkerControl(Protocol):
    """Interrupting and stopping one worker."""

    pid: int
    """The worker's process id, or the guest's number where workers are not processes."""
    interrupt_keeps_state: bool
    """True when an interrupted cell ends and the worker goes on with its variables (a
    signal); False when the worker ends with it (a WebAssembly guest)."""

    def alive(self) -> bool:
        """True while the worker has not ended."""

    def interrupt(self) -> None:
        """Stop the cell the worker runs (its time limit struck)."""

    def kill(self) -> None:
        """End the worker and what it started, at once."""

    def close(self) -> None:
        """Let go of what the control holds."""

    def ended_because(self) -> str | None:
        """Why the worker ended, when its sandbox says (None: it does not know)."""


class FrameWriter(Protocol):
    """The app's end of the stream to the worker (an asyncio.StreamWriter, or one like it)."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...

    def is_closing(self) -> bool: ...


@dataclass(frozen=True)
class WorkerConnection:
    """A started worker: its control, and the two directions of its stream."""

    control: WorkerControl
    reader: asyncio.StreamReader
    writer: FrameWriter


class WorkerLauncher(Protocol):
    """Starts a run's workers in one sandbox; reports which."""

    sandbox: SandboxReport | None

    async def start(self) -> SandboxReport:
        """Start the sandbox now (if it is not running) and return what it reported."""

    async def spawn(self, cwd: Path) -> WorkerConnection:
        """A new worker working in `cwd`."""

    async def close(self) -> None:
        """Stop the sandbox and every worker it started."""


async def start_once(
    running: Callable[[], bool],
    start: Callable[[], Awaitable[None]],
    stop: Callable[[], Awaitable[None]],
    failures: tuple[type[BaseException], ...],
) -> None:
    """`start` unless `running()`; if it fails with one of `failures`, `stop` and raise it (the
    caller holds its launcher's lock)."""
    if running():
        return
    try:
        await start()
    except failures:
        await stop()
        raise
