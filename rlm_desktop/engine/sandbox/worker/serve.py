"""Serving one RLM call: the context first, then cells and state requests in order until shutdown.

A reader thread takes the parent's messages: sub-call results go straight to the waiting call
(proxy.py), everything else is queued for the main thread, which runs it between cells with SIGINT
(the parent's cell time limit) raising `Interrupted`.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
from typing import Any

from .cells import Interrupted, fit, on_sigint, run_cell
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


def serve(channel: Channel) -> None:
    """Serve one RLM call: receive the context, then execute cells until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    init = channel.receive()
    if init is None:
        return
    _apply_limits(init.get("memory_limit_mb"))
    channel.limit = init.get("frame_limit")
    sys.path.extend(p for p in init.get("sys_path", []) if p not in sys.path)
    proxy = Proxy(channel)
    repl = Repl(
        proxy, init["context"], init.get("meta", []), init.get("contexts"), init.get("histories")
    )
    del init
    cells: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read_loop() -> None:
        while True:
            message = channel.receive()
            if message is None or message.get("type") == "shutdown":
                cells.put(None)
                return
            if message.get("type") == "result":
                proxy.resolve(message)
            elif message.get("type") in QUEUED:
                cells.put(message)

    threading.Thread(target=read_loop, name="protocol-reader", daemon=True).start()
    channel.send({"type": "ready", "pid": os.getpid()})
    while True:
        request = cells.get()
        if request is None:
            break
        if request.get("type") != "exec":
            signal.signal(signal.SIGINT, on_sigint)
            try:
                reply = _handle(repl, request, channel)
            finally:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            if reply is not None:
                reply["id"] = request.get("id")
                channel.send(reply)
            continue
        signal.signal(signal.SIGINT, on_sigint)
        try:
            result = run_cell(repl, request["code"], request.get("index", 0))
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
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        result["id"] = request.get("id")
        channel.send(fit(result, channel.limit))
