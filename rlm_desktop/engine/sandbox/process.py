"""The parent's handle on one REPL worker subprocess: start, execute cells, interrupt, kill, restart."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import site
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop.engine.sandbox.connection import (
    FrameWriter,
    WorkerControl,
    WorkerDied,
    WorkerLauncher,
)
from rlm_desktop.engine.sandbox.given_sources import GivenSource, given_sources
from rlm_desktop.engine.sandbox.handover import HEADER, ContextHandover, frame
from rlm_desktop.engine.sandbox.worker.variables import NAME_CHARS, VALUE_CHARS, VARIABLES_SHOWN
from rlm_desktop.engine.truncation import truncate_middle

INTERRUPT_GRACE_S = 2.0
BODY_STALL_S = 5.0
"""A frame's body must keep arriving: this long without a byte of it stops the worker."""
CALL_OPS = ("llm_query", "llm_query_batched", "rlm_query", "rlm_query_batched")

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
    sources: tuple[GivenSource, ...] = ()
    """The sources the answer was submitted with (`FINAL(..., sources=...)`), as sent."""
    timed_out: bool = False
    variables_lost: bool = False
    partial: str | None = None
    restored: tuple[str, ...] = ()
    """Tools (and `context`, `answer`) the cell overwrote or deleted, which the worker put back."""
    worker_note: str | None = None
    """Why the worker was restarted before this cell ran (it had stopped between cells)."""
    variables: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The model's variables after the cell, as short values (`Repl.variables_shown`)."""


@dataclass(frozen=True)
class StateReport:
    """What a worker kept of its variables (`kept`), or put back (`kept` then means restored).

    `lost` maps each variable that was not kept (or failed to come back) to the reason; `error`
    says why nothing could be done at all (no saved state, the worker stopped, time ran out).
    """

    kept: tuple[str, ...] = ()
    lost: dict[str, str] = dataclasses.field(default_factory=dict)
    size_bytes: int = 0
    error: str | None = None


class StateReceiver:
    """Takes a saved state's pieces as they arrive and hands them on, up to `limit_bytes` in
    all; past it it takes no more and says why (`error`)."""

    def __init__(self, sink: Callable[[bytes], Any], limit_bytes: int) -> None:
        self.sink = sink
        self.limit_bytes = limit_bytes
        self.size = 0
        self.error: str | None = None

    def take(self, piece: bytes) -> None:
        """Hand on one piece, unless an earlier one was refused."""
        if self.error is not None:
            return
        if self.size + len(piece) > self.limit_bytes:
            self.error = f"the saved state is larger than {_size(self.limit_bytes)}"
            return
        try:
            self.sink(piece)
        except OSError as failed:
            self.error = f"the saved state could not be written: {failed}"
            return
        self.size += len(piece)


class CellProgress:
    """What the running cell reported as it went (`cell_progress`: workers whose cells are
    stopped with them report so): its output, each stream kept to `cap` characters, and the
    answer it gave."""

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._texts: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._sizes = {"stdout": 0, "stderr": 0}
        self._answer: dict[str, Any] = {}

    def take(self, message: dict[str, Any]) -> None:
        for stream in ("stdout", "stderr"):
            room = self._cap - self._sizes[stream]
            text = message.get(stream) or ""
            if room > 0 and text:
                self._texts[stream].append(text[:room])
                self._sizes[stream] += min(room, len(text))
        if message.get("final") is not None:
            self._answer = message

    def outcome(self, stopped: CellOutcome) -> CellOutcome:
        """`stopped` with the output and the answer reported before the worker stopped."""
        answer = self._answer
        return dataclasses.replace(
            stopped,
            stdout="".join(self._texts["stdout"]),
            stderr="".join(self._texts["stderr"]),
            final=answer.get("final"),
            final_source=answer.get("final_source"),
            sources=given_sources(answer.get("sources")),
        )


class ProtocolViolation(WorkerDied):
    """The worker sent a frame the app does not accept; the worker is stopped at once."""


class SubCallFailure(Exception):
    """Raised by a call handler to send a typed error back into the REPL."""

    def __init__(self, error_type: str, message: str, results: list[Any] | None = None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.results = results


class WorkerProcess:
    """One worker subprocess serving one RLM call. The context is sent once per (re)start,
    document by document from the call's own copy (`ContextHandover`)."""

    def __init__(
        self,
        context: Any,
        meta: list[dict[str, Any]],
        *,
        scratch_dir: Path,
        memory_limit_mb: int | None,
        output_cap_chars: int,
        handler: CallHandler,
        launcher: WorkerLauncher | None = None,
        contexts: Sequence[Any] = (),
        histories: Sequence[Any] = (),
    ) -> None:
        self._handover = ContextHandover(
            context,
            {
                "type": "init",
                "meta": meta,
                "contexts": list(contexts),
                "histories": list(histories),
                "memory_limit_mb": memory_limit_mb,
                "sys_path": site.getsitepackages(),
            },
            output_cap_chars,
        )
        self.frame_limit = self._handover.frame_limit
        self._output_cap = output_cap_chars
        self._stopped_because: str | None = None
        self._stop_reason: str | None = None
        """Why the app stopped the worker (`stop`), for the cell it was running."""
        self._scratch = scratch_dir
        self._own_launcher = launcher is None
        if launcher is None:  # a worker of its own, in the kernel sandbox (tests, benchmarks)
            from rlm_desktop.engine.sandbox.kernel.launcher import Launcher

            launcher = Launcher(scratch_dir, output_cap_chars)
        self._launcher: WorkerLauncher = launcher
        self._handler = handler
        self._pid: int | None = None
        self._handle: WorkerControl | None = None
        self._writer: FrameWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._call_tasks: set[asyncio.Task[None]] = set()
        self._cell_future: asyncio.Future[dict[str, Any]] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._cell_ids = 0
        self._request_ids = 0
        self._replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._receivers: dict[int, StateReceiver] = {}
        self._progress: CellProgress | None = None
        self._history: list[dict[str, str]] = []
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
        """Start a worker and hand it the context; returns once it is ready for cells."""
        self._ready = asyncio.get_running_loop().create_future()
        self._stopped_because = None
        self._stop_reason = None
        connection = await self._launcher.spawn(self._scratch)
        self._handle = connection.control  # before any cell can run
        self._pid = connection.control.pid
        self._writer = connection.writer
        self._reader_task = asyncio.create_task(self._read_loop(connection.reader, self._handle))
        self.frame_limit = await self._handover.send(self._writer)
        if self._history:  # a restarted worker gets the call's history back
            self._writer.write(frame({"type": "history", "messages": self._history}))
        await self._writer.drain()
        await self._ready

    def extend_history(self, messages: Sequence[dict[str, str]]) -> None:
        """Append `messages` to the REPL's `history` (kept here too, for a restarted worker)."""
        self._history.extend(messages)
        if self.running:
            with contextlib.suppress(WorkerDied):
                self._send({"type": "history", "messages": list(messages)})

    async def save_state(
        self, cap_bytes: int, sink: Callable[[bytes], Any], limit_bytes: int, timeout_s: float
    ) -> StateReport:
        """Have the worker keep its variables (at most `cap_bytes` of them): their pickle comes
        back in pieces, each handed to `sink` as it arrives, never more than `limit_bytes` in
        all. The app never unpickles it; the report's size is what the app received (a worker's
        own count is model code's to fake)."""
        received = StateReceiver(sink, limit_bytes)
        request = {"type": "save_state", "cap_bytes": cap_bytes}
        reply = await self._state_request(request, timeout_s, receiver=received)
        saved = tuple(reply.get("saved", ()))
        error = received.error or reply.get("error")
        if error is None and received.size != reply.get("bytes"):
            error = f"{received.size:,} bytes of the saved state arrived of {reply.get('bytes')}"
        if error is not None:
            lost = {
                **reply.get("skipped", {}),
                **dict.fromkeys(saved, "its saved state was refused"),
            }
            return StateReport(lost=lost, error=error)
        return StateReport(saved, dict(reply.get("skipped", {})), received.size)

    async def restore_state(self, data: bytes, timeout_s: float) -> StateReport:
        """Have the worker put back the variables kept in `data` (a saved state's pickle)."""
        reply = await self._state_request({"type": "restore_state"}, timeout_s, data)
        return StateReport(
            tuple(reply.get("restored", ())), dict(reply.get("failed", {})), 0, reply.get("error")
        )

    async def _state_request(
        self,
        message: dict[str, Any],
        timeout_s: float,
        attachment: bytes | None = None,
        receiver: StateReceiver | None = None,
    ) -> dict[str, Any]:
        """Send a state request (`attachment` after it) and wait for its reply; `receiver`
        takes the pieces of a state that come back before the reply."""
        if not self.running:
            return {"error": "the REPL worker is not running"}
        self._request_ids += 1
        request_id = message["id"] = self._request_ids
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[request_id] = future
        if receiver is not None:
            self._receivers[request_id] = receiver
        try:
            self._send(message, attachment)
            return await asyncio.wait_for(asyncio.shield(future), timeout_s)
        except TimeoutError:
            if self._handle is not None and self.running:
                self._handle.interrupt()
            return {"error": f"it took longer than {timeout_s:g} s"}
        except WorkerDied as died:
            return {"error": str(died)}
        finally:
            self._replies.pop(request_id, None)
            self._receivers.pop(request_id, None)

    async def execute(self, code: str, timeout_s: float) -> CellOutcome:
        """Run one cell. Past `timeout_s` it is interrupted; if that fails the worker is restarted."""
        note = None
        if not self.running:
            if self._reader_task is not None:
                reason = self._stopped_because or "the REPL worker had stopped"
                note = f"{reason}; it was restarted before this cell"
            await self.restart()
        self._cell_ids += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._cell_future = future
        self._progress = CellProgress(self._output_cap)
        self._send({"type": "exec", "id": self._cell_ids, "code": code, "index": self._cell_ids})
        try:
            result = await asyncio.wait_for(asyncio.shield(future), timeout_s)
            outcome = _outcome(result, self._output_cap)
            if note is not None:
                return dataclasses.replace(outcome, variables_lost=True, worker_note=note)
            return outcome
        except TimeoutError:
            return await self._interrupt(future, timeout_s)
        except WorkerDied as died:
            await self.restart()
            return self._reported(
                CellOutcome("", "", f"WorkerDied: {died}", 0.0, variables_lost=True)
            )

    async def _interrupt(
        self, future: asyncio.Future[dict[str, Any]], timeout_s: float
    ) -> CellOutcome:
        self._cancel_calls()
        pauses = self._handle is None or self._handle.interrupt_keeps_state
        if self._handle is not None and self.running:
            self._handle.interrupt()
        try:
            result = await asyncio.wait_for(asyncio.shield(future), INTERRUPT_GRACE_S)
            outcome = _outcome(result, self._output_cap)
            message = (
                f"TimeoutError: the cell ran past the {timeout_s:g} s limit and was interrupted"
            )
            # What the cell did before the interrupt stands: its output, and an answer it gave.
            return dataclasses.replace(outcome, error=message, timed_out=True)
        except (TimeoutError, WorkerDied):
            await self.restart()
            how = (
                "could not be interrupted"
                if pauses
                else "was stopped (the WebAssembly sandbox cannot pause a cell)"
            )
            message = (
                f"TimeoutError: the cell ran past the {timeout_s:g} s limit and {how}; the REPL "
                "was restarted and its variables were lost (`context` is loaded again)"
            )
            return self._reported(
                CellOutcome("", "", message, timeout_s, timed_out=True, variables_lost=True)
            )

    def _reported(self, outcome: CellOutcome) -> CellOutcome:
        """`outcome` of a cell whose worker stopped, with what the cell reported as it went."""
        progress = self._progress
        return outcome if progress is None else progress.outcome(outcome)

    async def restart(self) -> None:
        """Kill the worker and start a fresh one with the same context."""
        self.restarts += 1
        await self.close()
        await self.start()

    def stop(self, reason: str) -> None:
        """Kill the worker now (see `kill`); the cell it was running fails with `reason`."""
        self._stop_reason = reason
        self.kill()

    def kill(self) -> None:
        """Kill the worker and what it started in its process group, at once (cancellation
        path); signalled through its handle, never by a number another process may hold now."""
        self._cancel_calls()
        if self._handle is not None:
            self._handle.kill()

    async def close(self) -> None:
        """Kill the worker and wait until its connection is gone."""
        self.kill()
        self._pid = None
        handle, self._handle = self._handle, None
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        task, self._reader_task = self._reader_task, None
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, INTERRUPT_GRACE_S)
        if handle is not None:
            handle.close()
        if self._own_launcher:
            await self._launcher.close()

    def _send(self, message: dict[str, Any], attachment: bytes | None = None) -> None:
        """Send `message`, and `attachment` as raw bytes after it (`attached` says its size)."""
        if self._writer is None or self._writer.is_closing():
            raise WorkerDied("the worker is not running")
        if attachment is None:
            self._writer.write(frame(message))
            return
        self._writer.write(frame({**message, "attached": len(attachment)}))
        self._writer.write(attachment)

    def _cancel_calls(self) -> None:
        for task in list(self._call_tasks):
            task.cancel()

    async def _read_loop(self, reader: asyncio.StreamReader, worker: WorkerControl) -> None:
        """Read the worker's frames; trust none of them (model code can write to this socket).

        A frame announced larger than `frame_limit` stops the worker before its body is read; a
        body that is not a JSON object with the fields its type needs stops it too. Either way
        the cell in progress ends with the reason, as for any other worker death.
        """
        died: WorkerDied | None = None
        try:
            while True:
                header = await reader.readexactly(HEADER.size)
                (length,) = HEADER.unpack(header)
                if length > self.frame_limit:
                    raise ProtocolViolation(
                        f"the REPL worker sent a {_size(length)} message "
                        f"(limit {_size(self.frame_limit)}); it was stopped"
                    )
                message = _checked(await _read_body(reader, length))
                if message["type"] == "state_chunk":  # raw bytes follow (`attached` of them)
                    attached = message["attached"]
                    if attached > self.frame_limit:
                        raise ProtocolViolation(
                            f"the REPL worker sent {_size(attached)} of a saved state at once "
                            f"(limit {_size(self.frame_limit)}); it was stopped"
                        )
                    message["attachment"] = await _read_body(reader, attached)
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            pass
        except ProtocolViolation as violation:
            died = violation
            self._cancel_calls()
            worker.kill()
        died = died or WorkerDied(
            self._stop_reason
            or worker.ended_because()
            or "the REPL worker died (killed, out of memory, or crashed); its variables are lost"
        )
        self._stopped_because = str(died)
        for future in (self._ready, self._cell_future, *self._replies.values()):
            if future is not None and not future.done():
                future.set_exception(died)
                future.exception()  # the waiter may be gone (cancelled); never log it as lost

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "ready" and self._ready is not None and not self._ready.done():
            self._ready.set_result(None)
        elif kind == "cell_result" and self._cell_future is not None:
            if message.get("id") == self._cell_ids and not self._cell_future.done():
                self._cell_future.set_result(message)
        elif kind == "state_chunk":
            receiver = self._receivers.get(message["id"])
            if receiver is not None:
                receiver.take(message["attachment"])
        elif kind in ("state_saved", "state_restored"):
            future = self._replies.get(message["id"])
            if future is not None and not future.done():
                future.set_result(message)
        elif kind == "cell_progress":
            if message.get("id") == self._cell_ids and self._progress is not None:
                self._progress.take(message)
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


async def _read_body(reader: asyncio.StreamReader, length: int) -> bytes:
    """`length` bytes, or `ProtocolViolation` once none of them came for `BODY_STALL_S`."""
    body = bytearray()
    while len(body) < length:
        try:
            chunk = await asyncio.wait_for(reader.read(length - len(body)), BODY_STALL_S)
        except TimeoutError:
            raise ProtocolViolation(
                f"the REPL worker sent an incomplete message ({_size(len(body))} of "
                f"{_size(length)}, then nothing for {BODY_STALL_S:g} s); it was stopped"
            ) from None
        if not chunk:
            raise asyncio.IncompleteReadError(bytes(body), length)
        body += chunk
    return bytes(body)


def _size(length: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if length >= scale:
            return f"{length / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{length} bytes"


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_optional_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _is_texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_text_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _is_context(value: Any) -> bool:
    return value is None or isinstance(value, str) or _is_texts(value)


def _is_contexts(value: Any) -> bool:
    return value is None or (isinstance(value, list) and all(_is_context(v) for v in value))


# The fields each frame type needs (required) and may have (optional), with their checks.
FRAME_FIELDS: dict[
    str, tuple[dict[str, Callable[[Any], bool]], dict[str, Callable[[Any], bool]]]
] = {
    "ready": ({"pid": _is_int}, {}),
    "cell_result": (
        {"id": _is_int, "stdout": _is_text, "stderr": _is_text, "error": _is_optional_text},
        {
            "duration_s": _is_number,
            "final": _is_optional_text,
            "final_source": _is_optional_text,
            "sources": lambda v: isinstance(v, list),
            "partial": _is_optional_text,
            "interrupted": lambda v: isinstance(v, bool),
            "restored": _is_texts,
            "variables": lambda v: isinstance(v, dict),
        },
    ),
    "call": (
        {"id": _is_int, "op": lambda v: v in CALL_OPS, "args": lambda v: isinstance(v, dict)},
        {},
    ),
    "cell_progress": (
        {"id": _is_int},
        {
            "stdout": _is_text,
            "stderr": _is_text,
            "final": _is_optional_text,
            "final_source": _is_optional_text,
            "sources": lambda v: isinstance(v, list),
        },
    ),
    "state_chunk": ({"id": _is_int, "attached": lambda v: _is_int(v) and v >= 0}, {}),
    "state_saved": (
        {"id": _is_int},
        {"saved": _is_texts, "skipped": _is_text_map, "bytes": _is_int, "error": _is_optional_text},
    ),
    "state_restored": (
        {"id": _is_int},
        {"restored": _is_texts, "failed": _is_text_map, "error": _is_optional_text},
    ),
}
CALL_ARGS: dict[str, dict[str, Callable[[Any], bool]]] = {
    "llm_query": {"prompt": _is_text},
    "llm_query_batched": {"prompts": _is_texts},
    "rlm_query": {"prompt": _is_text},
    "rlm_query_batched": {"prompts": _is_texts},
}
CALL_OPTIONAL_ARGS: dict[str, Callable[[Any], bool]] = {
    "model": _is_optional_text,
    "context": _is_context,
    "contexts": _is_contexts,
}


def _checked(body: bytes) -> dict[str, Any]:
    """The frame `body` as a message, if it is a JSON object of a known type with its fields."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        raise ProtocolViolation(
            f"the REPL worker sent a message that is not valid JSON ({_size(len(body))}); "
            "it was stopped"
        ) from None
    if not isinstance(message, dict):
        raise ProtocolViolation(
            f"the REPL worker sent a message that is not a JSON object "
            f"({type(message).__name__}); it was stopped"
        )
    kind = message.get("type")
    if not isinstance(kind, str) or kind not in FRAME_FIELDS:
        raise ProtocolViolation(
            f"the REPL worker sent a message of unknown type {str(kind)[:40]!r}; it was stopped"
        )
    required, optional = FRAME_FIELDS[kind]
    wrong = [k for k, ok in required.items() if k not in message or not ok(message[k])]
    wrong += [k for k, ok in optional.items() if k in message and not ok(message[k])]
    if kind == "call" and not wrong:
        args = message["args"]
        wrong = [f"args.{k}" for k, ok in CALL_ARGS[message["op"]].items() if not ok(args.get(k))]
        wrong += [f"args.{k}" for k, ok in CALL_OPTIONAL_ARGS.items() if not ok(args.get(k))]
    if "attached" in message and kind != "state_chunk":
        wrong.append("attached")  # raw bytes follow a state's pieces only
    if wrong:
        raise ProtocolViolation(
            f"the REPL worker sent a {kind!r} message with missing or malformed fields "
            f"({', '.join(wrong)}); it was stopped"
        )
    return message


def _outcome(result: dict[str, Any], cap: int) -> CellOutcome:
    """The cell's outcome, its texts cut to `cap` characters whatever the worker claims."""
    error = result.get("error")
    return CellOutcome(
        stdout=truncate_middle(result.get("stdout", ""), cap),
        stderr=truncate_middle(result.get("stderr", ""), cap),
        error=truncate_middle(error, cap) if error is not None else None,
        duration_s=float(result.get("duration_s", 0.0)),
        final=result.get("final"),
        final_source=result.get("final_source"),
        sources=given_sources(result.get("sources")),
        timed_out=bool(result.get("interrupted")),
        partial=result.get("partial"),
        restored=tuple(result.get("restored", ())),
        variables=_bounded_variables(result.get("variables", {})),
    )


def _bounded_variables(reported: dict[str, Any]) -> dict[str, Any]:
    """The worker's variables within its own bounds, whatever it claims: at most
    `VARIABLES_SHOWN` names, texts cut to `VALUE_CHARS`, values JSON's scalars."""
    bounded: dict[str, Any] = {}
    for name, value in reported.items():
        if len(bounded) >= VARIABLES_SHOWN:
            break
        if len(name) > NAME_CHARS:
            continue
        if isinstance(value, str):
            bounded[name] = value[:VALUE_CHARS]
        elif _is_json_scalar(value):
            bounded[name] = value
    return bounded


def _is_json_scalar(value: Any) -> bool:
    """None, a boolean, a 64-bit integer or a finite float: what JSON and SQLite hold as is."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and -(2**63) <= value < 2**63
