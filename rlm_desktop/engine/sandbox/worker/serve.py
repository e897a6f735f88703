"""Serving one RLM call: the context first, then cells and state requests in order until shutdown.

A reader thread takes the parent's messages: sub-call results go straight to the waiting call
(proxy.py), everything else is queued for the main thread, which runs it between cells with SIGINT
(the parent's cell time limit) raising `Interrupted`.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .cells import Interrupted, Progress, fit, on_sigint, run_cell
from .channel import Channel
from .proxy import Proxy
from .repl import Repl
from .state import restore_state, save_state, why

QUEUED = ("exec", "history", "save_state", "restore_state")
"""Requests served in order by the main thread, between cells."""


def _apply_limits(memory_limit_mb: int | None) -> None:
    if memory_limit_mb:
        try:
            import resource

            limit = memory_limit_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass


def _handle(repl: Repl, request: dict[str, Any], channel: Channel) -> dict[str, Any] | None:
    """Serve one request that is not a cell; returns the reply to send, if it has one."""
    kind = request.get("type")
    if kind == "history":
        repl.history.extend(request.get("messages", []))
        return None
    if kind == "save_state":

        def send(piece: bytes) -> None:
            channel.send({"type": "state_chunk", "id": request.get("id")}, piece)

        try:
            return save_state(repl, int(request.get("cap_bytes", 0)), send)
        except Interrupted:
            return {"type": "state_saved", "saved": [], "skipped": {}, "error": "interrupted"}
        except Exception as error:
            return {"type": "state_saved", "saved": [], "skipped": {}, "error": why(error)}
    if kind == "restore_state":
        try:
            return restore_state(repl, request.get("attachment", b""))
        except Interrupted:
            return {"type": "state_restored", "restored": [], "failed": {}, "error": "interrupted"}
        except Exception as error:
            return {"type": "state_restored", "restored": [], "failed": {}, "error": why(error)}
    return None


class ParentGone(BaseException):
    """The parent closed the channel (or said shutdown) while a sub-call's result was awaited."""


def _receive_context(channel: Channel, init: dict[str, Any]) -> Any:
    """The context whose pieces follow `init` (appended as they come: the whole never arrives
    as one frame), up to `context_end`, which sets the frame limit; `ParentGone` if the
    parent closed the channel first."""
    pieces: list[Any] = []
    while (message := channel.receive()) is not None and message.get("type") == "context_part":
        pieces.append(message.get("value"))
    if message is None or message.get("type") != "context_end":
        raise ParentGone()
    channel.limit = message.get("frame_limit")
    shape = init.get("context_parts")
    if shape == "text":
        return "".join(pieces)
    return pieces if shape == "list" else init.get("context")


def _begin(channel: Channel, pump: Callable[[], None] | None = None) -> Repl | None:
    """The REPL made from the parent's first messages (the context), or None if none came."""
    init = channel.receive()
    if init is None:
        return None
    _apply_limits(init.get("memory_limit_mb"))
    try:
        context = _receive_context(channel, init)
    except ParentGone:
        return None
    sys.path.extend(p for p in init.get("sys_path", []) if p not in sys.path)
    return Repl(
        Proxy(channel, pump),
        context,
        init.get("meta", []),
        init.get("contexts"),
        init.get("histories"),
    )


@contextlib.contextmanager
def _interruptible(signals: bool) -> Iterator[None]:
    """While a request runs, SIGINT (the parent's time limit) raises `Interrupted`."""
    if not signals:
        yield
        return
    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _serve_request(repl: Repl, request: dict[str, Any], channel: Channel, signals: bool) -> None:
    """Run one queued request (a cell, or a state or history request) and send its reply."""
    if request.get("type") != "exec":
        with _interruptible(signals):
            reply = _handle(repl, request, channel)
        if reply is not None:
            reply["id"] = request.get("id")
            channel.send(reply)
        return
    # Without signals (WebAssembly) a cell past its time is stopped with its worker: it reports
    # as it goes, so that what it printed and answered before is not lost.
    progress = None if signals else Progress(channel.send, request.get("id"))
    try:
        with _interruptible(signals):
            result = run_cell(repl, request["code"], request.get("index", 0), progress)
    except Interrupted:
        result = {
            "type": "cell_result",
            "stdout": "",
            "stderr": "",
            "error": "TimeoutError: interrupted",
            "interrupted": True,
            "duration_s": 0.0,
            "restored": repl.restore_tools(),
        }
    result["id"] = request.get("id")
    channel.send(fit(result, channel.limit))


def serve(channel: Channel) -> None:
    """Serve one RLM call: receive the context, then execute cells until told to stop.

    A reader thread takes the parent's messages meanwhile, so sub-call results reach model
    code's threads; SIGINT interrupts a cell.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    repl = _begin(channel)
    if repl is None:
        return
    cells: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read_loop() -> None:
        while True:
            message = channel.receive()
            if message is None or message.get("type") == "shutdown":
                cells.put(None)
                return
            if message.get("type") == "result":
                repl.proxy.resolve(message)
            elif message.get("type") in QUEUED:
                cells.put(message)

    threading.Thread(target=read_loop, name="protocol-reader", daemon=True).start()
    channel.send({"type": "ready", "pid": os.getpid()})
    while True:
        request = cells.get()
        if request is None:
            break
        _serve_request(repl, request, channel, signals=True)


def serve_in_turn(channel: Channel) -> None:
    """Serve one RLM call on one thread, without signals (a WebAssembly guest): messages that
    come while a sub-call's result is awaited wait their turn; the host stops an endless cell."""
    backlog: collections.deque[dict[str, Any]] = collections.deque()
    holder: list[Repl] = []

    def take() -> dict[str, Any]:
        message = channel.receive()
        if message is None or message.get("type") == "shutdown":
            raise ParentGone()
        if message.get("type") == "result" and holder:
            holder[0].proxy.resolve(message)
        return message

    def pump() -> None:
        message = take()
        if message.get("type") in QUEUED:
            backlog.append(message)

    repl = _begin(channel, pump)
    if repl is None:
        return
    holder.append(repl)
    channel.send({"type": "ready", "pid": os.getpid()})
    try:
        while True:
            request = backlog.popleft() if backlog else take()
            if request.get("type") in QUEUED:
                _serve_request(repl, request, channel, signals=False)
    except ParentGone:
        return
