"""Sub-calls from model code: requests to the parent, each waited for by its own id."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from .channel import Channel, MessageTooLarge
from .errors import ERRORS, LLMCallError


class Proxy:
    """Sends sub-call requests to the parent and waits for their results.

    The parent's replies reach `resolve` from a reader thread, or, where there are no threads
    (WebAssembly), from `pump`: it is called while a result is awaited and reads one message.
    """

    def __init__(self, channel: Channel, pump: Callable[[], None] | None = None) -> None:
        self._channel = channel
        self._pump = pump
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._lock = threading.Lock()

    def call(self, op: str, **arguments: Any) -> Any:
        request_id = next(self._ids)
        done = threading.Event()
        slot: list[dict[str, Any]] = []
        with self._lock:
            self._pending[request_id] = (done, slot)
        try:
            try:
                self._channel.send({"type": "call", "id": request_id, "op": op, "args": arguments})
            except MessageTooLarge as error:
                raise LLMCallError(
                    f"{op}: the request is too large to send ({error}); send less text per call"
                ) from None
            while self._pump is not None and not done.is_set():
                self._pump()
            done.wait()
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        reply = slot[0]
        if reply.get("ok"):
            return reply.get("value")
        error_class = ERRORS.get(reply.get("error_type", ""), LLMCallError)
        raise error_class(reply.get("message", "sub-call failed"), reply.get("results"))

    def resolve(self, message: dict[str, Any]) -> None:
        with self._lock:
            entry = self._pending.get(message.get("id", -1))
        if entry is not None:
            entry[1].append(message)
            entry[0].set()
