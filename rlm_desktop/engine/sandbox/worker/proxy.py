"""Sub-calls from model code: requests to the parent, each waited for by its own id."""

from __future__ import annotations

import itertools
import threading
from typing import Any

from .channel import Channel, MessageTooLarge
from .errors import ERRORS, LLMCallError


class Proxy:
    """Sends sub-call requests to the parent and waits for their results."""

    def __init__(self, channel: Channel) -> None:
        self._channel = channel
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
