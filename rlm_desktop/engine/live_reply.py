"""A reply's text handed on while it streams, as `ReplyStreamed` events a screen can keep up with.

A fast provider sends hundreds of pieces a second, and a fan-out streams hundreds of replies at
once: one event per piece would flood the bus and the window. Pieces are gathered and sent on at
most every `INTERVAL_S` per request (a piece after a pause at once), and what is left is sent before the reply's `LLMResponded`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rlm_desktop.engine.events import Event, ReplyStreamed
from rlm_desktop.engine.reply_stream import StreamStop, StreamWatch

INTERVAL_S = 0.025
"""Forty updates a second at most: smooth to the eye, light on the loop, and with the window's
own 40 ms batching (`ui/bridge/events.py`) a piece is on screen within about 65 ms of its arrival
(`make bench`: server's flush to the console)."""


class LiveReply:
    """Streams one request's reply text to `emit` as `ReplyStreamed` events."""

    def __init__(
        self, emit: Callable[[Event], None], run_id: str, call_id: str, request_id: str
    ) -> None:
        self._emit = emit
        self._run_id, self._call_id, self._request_id = run_id, call_id, request_id
        self._pending: list[str] = []
        self._characters = 0
        self._tokens = 0
        self._timer: asyncio.TimerHandle | None = None
        self._last = -INTERVAL_S

    def watch(self, stop: StreamStop | None) -> StreamWatch:
        """The watch to send the request with: its text comes here, `stop` may end it."""
        return StreamWatch(on_text=self._take, stop=stop)

    def restart(self) -> None:
        """The request is sent again: what its failed attempt streamed is dropped."""
        self._cancel_timer()
        self._pending.clear()
        self._characters = self._tokens = 0

    def flush(self) -> None:
        """Send on what has arrived since the last event (nothing when nothing has)."""
        self._cancel_timer()
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self._last = asyncio.get_running_loop().time()
        self._emit(
            ReplyStreamed(
                run_id=self._run_id, call_id=self._call_id, request_id=self._request_id,
                text=text, characters=self._characters, tokens=self._tokens,
            )
        )  # fmt: skip

    def _take(self, piece: str, tokens: int) -> None:
        self._pending.append(piece)
        self._characters += len(piece)
        self._tokens = tokens
        loop = asyncio.get_running_loop()
        due = self._last + INTERVAL_S
        if loop.time() >= due:
            self.flush()  # the first piece after a pause shows at once
        elif self._timer is None:
            self._timer = loop.call_at(due, self.flush)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
