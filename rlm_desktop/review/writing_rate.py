"""How fast the model is writing right now: tokens a second over the last few seconds, across
every reply streaming at once (a fan-out's sub-calls write side by side)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

WINDOW_S = 3.0
"""The rate is taken over this much of the recent past: long enough to be steady at a laptop's
ten tokens a second, short enough to fall to nothing soon after the writing stops."""


@dataclass
class WritingRate:
    """Tokens as they arrive, by request; `per_second(now)` is the recent rate."""

    _arrived: deque[tuple[float, int]] = field(default_factory=deque)
    _so_far: dict[str, int] = field(default_factory=dict)

    def note(self, request_id: str, tokens: int, ts: float) -> None:
        """The reply to `request_id` has `tokens` tokens at `ts`."""
        added = tokens - self._so_far.get(request_id, 0)
        self._so_far[request_id] = tokens
        if added > 0:
            self._arrived.append((ts, added))
        self._forget_before(ts - WINDOW_S)

    def restart(self, request_id: str) -> None:
        """The request is sent again: its reply starts over."""
        self._so_far.pop(request_id, None)

    def done(self, request_id: str) -> None:
        """The request's reply is complete."""
        self._so_far.pop(request_id, None)

    def per_second(self, now: float) -> float | None:
        """Tokens a second over the last `WINDOW_S`, or None when nothing arrived in it."""
        self._forget_before(now - WINDOW_S)
        if not self._arrived:
            return None
        span = max(now - self._arrived[0][0], 1.0)
        return sum(tokens for _ts, tokens in self._arrived) / span

    def _forget_before(self, moment: float) -> None:
        while self._arrived and self._arrived[0][0] < moment:
            self._arrived.popleft()
