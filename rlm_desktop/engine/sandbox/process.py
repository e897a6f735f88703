"""The parent's handle on one REPL worker subprocess: start, execute cells, interrupt, kill, restart."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import site
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop.engine.sandbox.launcher import Launcher, WorkerDied

HEADER = struct.Struct(">I")
INTERRUPT_GRACE_S = 2.0
STREAM_LIMIT = 1 << 30

CallHandler = Callable[[str, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class CellOutcome:
    """What a cell did, as the worker reported it (or as the parent saw it die)."""

    stdout: str
    stderr: str
    error: str | None
    duration_s: float
    final: str | None = None
    final_source: str | None = None
    timed_out: bool = False
    variables_lost: bool = False
    partial: str | None = None


class SubCallFailure(Exception):
    """Raised by a call handler to send a typed error back into the REPL."""

    def __init__(self, error_type: str, message: str, results: list[Any] | None = None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.results = results


class WorkerProcess:
    """One worker subprocess serving one RLM call. The context is sent once per (re)start."""

    def __init__(
        self,
        context: Any,
        meta: list[dict[str, Any]],
        *,
        scratch_dir: Path,
        memory_limit_mb: int | None,
        output_cap_chars: int,
        handler: CallHandler,
        launcher: Launcher | None = None,
    ) -> None:
        self._init_frame = _frame(
            {
                "type": "init",
                "context": context,
                "meta": meta,
                "memory_limit_mb": memory_limit_mb,
                "sys_path": site.getsitepackages(),
            }
        )
        self._scratch = scratch_dir
        self._own_launcher = launcher is None
        self._launcher = launcher or Launcher(scratch_dir, output_cap_chars)
        self._handler = handler
        self._pid: int | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._call_tasks: set[asyncio.Task[None]] = set()
        self._cell_future: asyncio.Future[dict[str, Any]] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._cell_ids = 0
        self.restarts = 0

    @property
    def cells_run(self) -> int:
        """Cells sent so far; the next one is named `<cell cells_run + 1>` in tracebacks."""
        return self._cell_ids

    @property
    def pid(self) -> int | None:
        """The worker's process id while it runs."""
        return self._pid

    @property
    def running(self) -> bool:
        """True while the worker is connected."""
        return self._reader_task is not None and not self._reader_task.done()

    async def start(self) -> None:
        """Fork a worker and hand it the context; returns once it is ready for cells."""
        self._ready = asyncio.get_running_loop().create_future()
        self._pid, sock = await self._launcher.spawn(self._scratch)
        reader, self._writer = await asyncio.open_unix_connection(sock=sock, limit=STREAM_LIMIT)
        self._reader_task = asyncio.create_task(self._read_loop(reader))
        self._writer.write(self._init_frame)
        await self._writer.drain()
        await self._ready

    async def execute(self, code: str, timeout_s: float) -> CellOutcome:
        """Run one cell. Past `timeout_s` it is interrupted; if that fails the worker is restarted."""
        if not self.running:
            await self.restart()
        self._cell_ids += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._cell_future = future
        self._send({"type": "exec", "id": self._cell_ids, "code": code, "index": self._cell_ids})
        try:
            result = await asyncio.wait_for(asyncio.shield(future), timeout_s)
            return _outcome(result)
        except TimeoutError:
            return await self._interrupt(future, timeout_s)
        except WorkerDied as died:
            await self.restart()
            return CellOutcome("", "", f"WorkerDied: {died}", 0.0, variables_lost=True)

    async def _interrupt(
        self, future: asyncio.Future[dict[str, Any]], timeout_s: float
    ) -> CellOutcome:
        self._cancel_calls()
        if self._pid is not None and self.running:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGINT)
        try:
            result = await asyncio.wait_for(asyncio.shield(future), INTERRUPT_GRACE_S)
            outcome = _outcome(result)
            message = (
                f"TimeoutError: the cell ran past the {timeout_s:g} s limit and was interrupted"
            )
            return CellOutcome(
                outcome.stdout, outcome.stderr, message, outcome.duration_s, timed_out=True
            )
        except (TimeoutError, WorkerDied):
            await self.restart()
            message = (
                f"TimeoutError: the cell ran past the {timeout_s:g} s limit and could not be "
                "interrupted; the REPL was restarted and its variables were lost "
                "(`context` is loaded again)"
            )
            return CellOutcome("", "", message, timeout_s, timed_out=True, variables_lost=True)

    async def restart(self) -> None:
        """Kill the worker and start a fresh one with the same context."""
        self.restarts += 1
        await self.close()
        await self.start()

    def kill(self) -> None:
        """Kill the worker and everything it started, at once (cancellation path)."""
        self._cancel_calls()
        if self._pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._pid, signal.SIGKILL)

    async def close(self) -> None:
        """Kill the worker and wait until its connection is gone."""
        self.kill()
        self._pid = None
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        task, self._reader_task = self._reader_task, None
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, INTERRUPT_GRACE_S)
        if self._own_launcher:
            await self._launcher.close()

    def _send(self, message: dict[str, Any]) -> None:
        if self._writer is None or self._writer.is_closing():
            raise WorkerDied("the worker is not running")
        self._writer.write(_frame(message))

    def _cancel_calls(self) -> None:
        for task in list(self._call_tasks):
            task.cancel()

    async def _read_loop(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                header = await reader.readexactly(HEADER.size)
                (length,) = HEADER.unpack(header)
                message = json.loads(await reader.readexactly(length))
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            pass
        died = WorkerDied(
            "the REPL worker died (killed, out of memory, or crashed); its variables are lost"
        )
        for future in (self._ready, self._cell_future):
            if future is not None and not future.done():
                future.set_exception(died)
                future.exception()  # the waiter may be gone (cancelled); never log it as lost

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "ready" and self._ready is not None and not self._ready.done():
            self._ready.set_result(None)
        elif kind == "cell_result" and self._cell_future is not None:
            if not self._cell_future.done():
                self._cell_future.set_result(message)
        elif kind == "call":
            task = asyncio.create_task(self._serve_call(message))
            self._call_tasks.add(task)
            task.add_done_callback(self._call_tasks.discard)

    async def _serve_call(self, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"type": "result", "id": message["id"]}
        try:
            reply.update(ok=True, value=await self._handler(message["op"], message["args"]))
        except SubCallFailure as failure:
            reply.update(
                ok=False,
                error_type=failure.error_type,
                message=failure.message,
                results=failure.results,
            )
        except asyncio.CancelledError:
            reply.update(ok=False, error_type="LLMCallError", message="the sub-call was cancelled")
            raise
        except Exception as error:
            reply.update(
                ok=False, error_type="LLMCallError", message=f"{type(error).__name__}: {error}"
            )
        finally:
            with contextlib.suppress(WorkerDied):
                self._send(reply)


def _frame(message: dict[str, Any]) -> bytes:
    data = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return HEADER.pack(len(data)) + data


def _outcome(result: dict[str, Any]) -> CellOutcome:
    return CellOutcome(
        stdout=result.get("stdout", ""),
        stderr=result.get("stderr", ""),
        error=result.get("error"),
        duration_s=float(result.get("duration_s", 0.0)),
        final=result.get("final"),
        final_source=result.get("final_source"),
        timed_out=bool(result.get("interrupted")),
        partial=result.get("partial"),
    )
