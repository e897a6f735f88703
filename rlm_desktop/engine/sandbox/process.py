"""The parent's handle on one REPL worker subprocess: start, execute cells, interrupt, kill, restart."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import struct
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop.engine.sandbox.environment import worker_environment

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
HEADER = struct.Struct(">I")
INTERRUPT_GRACE_S = 2.0
STREAM_LIMIT = 1 << 30

CallHandler = Callable[[str, dict[str, Any]], Awaitable[Any]]


class WorkerDied(Exception):
    """The worker process exited while it was needed."""


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
    ) -> None:
        self._init_frame = _frame(
            {"type": "init", "context": context, "meta": meta, "memory_limit_mb": memory_limit_mb}
        )
        self._scratch = scratch_dir
        self._output_cap = output_cap_chars
        self._handler = handler
        self._process: asyncio.subprocess.Process | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._call_tasks: set[asyncio.Task[None]] = set()
        self._cell_future: asyncio.Future[dict[str, Any]] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._cell_ids = 0
        self.restarts = 0

    @property
    def pid(self) -> int | None:
        """The worker's process id while it runs."""
        return self._process.pid if self._process else None

    async def start(self) -> None:
        """Spawn the worker and hand it the context; returns once it is ready for cells."""
        self._scratch.mkdir(parents=True, exist_ok=True)
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            str(WORKER_SCRIPT),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=self._scratch,
            env=worker_environment(self._scratch, self._output_cap),
            limit=STREAM_LIMIT,
            start_new_session=True,
        )
        self._reader_task = asyncio.create_task(self._read_loop(self._process))
        assert self._process.stdin is not None
        self._process.stdin.write(self._init_frame)
        await self._process.stdin.drain()
        await self._ready

    async def execute(self, code: str, timeout_s: float) -> CellOutcome:
        """Run one cell. Past `timeout_s` it is interrupted; if that fails the worker is restarted."""
        if self._process is None or self._process.returncode is not None:
            await self.restart("the worker was not running")
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
            await self.restart(str(died))
            return CellOutcome("", "", f"WorkerDied: {died}", 0.0, variables_lost=True)

    async def _interrupt(
        self, future: asyncio.Future[dict[str, Any]], timeout_s: float
    ) -> CellOutcome:
        self._cancel_calls()
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.send_signal(signal.SIGINT)
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
            await self.restart("a cell could not be interrupted")
            message = (
                f"TimeoutError: the cell ran past the {timeout_s:g} s limit and could not be "
                "interrupted; the REPL was restarted and its variables were lost "
                "(`context` is loaded again)"
            )
            return CellOutcome("", "", message, timeout_s, timed_out=True, variables_lost=True)

    async def restart(self, reason: str) -> None:
        """Kill the worker and start a fresh one with the same context."""
        self.restarts += 1
        await self.close()
        await self.start()

    def kill(self) -> None:
        """Kill the worker at once (cancellation path)."""
        self._cancel_calls()
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)

    async def close(self) -> None:
        """Kill the worker and reap it."""
        self.kill()
        process, self._process = self._process, None
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
        if self._reader_task is not None:
            self._reader_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader_task
            self._reader_task = None

    def _send(self, message: dict[str, Any]) -> None:
        if self._process is None or self._process.stdin is None:
            raise WorkerDied("the worker is not running")
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            self._process.stdin.write(_frame(message))

    def _cancel_calls(self) -> None:
        for task in list(self._call_tasks):
            task.cancel()

    async def _read_loop(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        try:
            while True:
                header = await process.stdout.readexactly(HEADER.size)
                (length,) = HEADER.unpack(header)
                message = json.loads(await process.stdout.readexactly(length))
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            pass
        code = await process.wait()
        died = WorkerDied(_exit_description(code))
        for future in (self._ready, self._cell_future):
            if future is not None and not future.done():
                future.set_exception(died)

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
            self._send(reply)
            raise
        except Exception as error:
            reply.update(
                ok=False, error_type="LLMCallError", message=f"{type(error).__name__}: {error}"
            )
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


def _exit_description(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the REPL worker was killed by {name} (out of memory or a crash)"
    return f"the REPL worker exited with code {code}"
