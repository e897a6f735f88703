"""A model's reply as it streams in: its text so far, when to stop reading, and what it counted.

Every reply is asked for as a stream (`stream: true`, usage in its last chunk). The text is
handed on as it arrives (`StreamWatch.on_text`), and reading stops early for two reasons:
- the output-token cap: a piece that would take the reply past the `max_tokens` it was sent is
  not taken, whatever the provider does, so a call's hold is its true worst case. A reply's
  pieces are counted both as chunks (a server sends at most one chunk per token) and with the
  app's tokenizer (with the margin `reply_acceptance` allows, since tokenizers differ);
- the caller's stop (`StreamWatch.stop`): a root reply is complete once what follows its code
  blocks is no further code (`code_stop.CodeStop`), and what a model writes after that is never
  run.
A server that answers a stream request with a plain reply is read as one (`plain`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from rlm_desktop.engine.encodings import encoded_length, tokenizer_for

OVERRUN_MARGIN = 1.25
"""How far the app's own count may pass `max_tokens` before the reply is cut (see above)."""
ARRIVAL_POINTS = 120
"""At most this many (seconds, characters) points are kept of a reply's arrival, for replay."""
CUT_AT_CAP = "max_tokens"
CUT_AT_CODE = "code"


@dataclass(frozen=True)
class StreamTimes:
    """How long a streamed reply may keep the app waiting: `first_byte_s` from the request to the
    first byte of its body (a local model reads its whole prompt first), then at most
    `silence_s` between two pieces. A slow model that is still writing is never cut."""

    first_byte_s: float
    silence_s: float


class StreamSilent(Exception):
    """A streamed reply stopped arriving: no first byte, or a silence past its limit."""

    def __init__(self, message: str, *, started: bool) -> None:
        super().__init__(message)
        self.started = started
        """True when some of the reply had arrived before the silence."""


class StreamStop(Protocol):
    """Decides, as a reply grows, where it is complete: the end of the text to keep, or None."""

    def end(self, text: str) -> int | None:
        """The index after which `text` (the reply so far) is complete, or None to read on."""


@dataclass
class StreamWatch:
    """What a request's caller wants while its reply streams."""

    on_text: Callable[[str, int], None] | None = None
    """Called with each piece of text taken (never a piece past a cut) and the reply's tokens
    so far."""
    stop: StreamStop | None = None


@dataclass
class Arrivals:
    """When a reply's text arrived: (seconds after the request was sent, characters so far),
    thinned to at most `ARRIVAL_POINTS` points so a long reply stores a bounded record."""

    sent: float = field(default_factory=time.monotonic)
    points: list[tuple[float, int]] = field(default_factory=list)
    _step: float = 0.0

    def note(self, characters: int) -> None:
        """Record that the reply has `characters` characters now."""
        elapsed = round(time.monotonic() - self.sent, 3)
        if self.points and elapsed - self.points[-1][0] < self._step:
            self.points[-1] = (self.points[-1][0], characters)
            return
        self.points.append((elapsed, characters))
        if len(self.points) > ARRIVAL_POINTS:
            self.points = self.points[::2]
            self._step = max(self._step * 2, elapsed / ARRIVAL_POINTS)

    @property
    def first_s(self) -> float | None:
        """Seconds from the request to its first text, or None when no text came."""
        return self.points[0][0] if self.points else None


class PieceReader(Protocol):
    """Turns the raw pieces of a reply into the text they stand for (a JSON-shaped reply into
    prose and a block: `constrained_replies.JsonTurnReader`)."""

    def feed(self, piece: str) -> str:
        """The text `piece` adds."""


class ReplyAssembler:
    """Takes a streamed reply's pieces in, cutting it where the cap or the caller says.

    With a `reader`, the pieces are counted as they arrive and kept as the reader renders them.
    """

    def __init__(
        self,
        model: str,
        max_tokens: int,
        watch: StreamWatch | None = None,
        reader: PieceReader | None = None,
    ) -> None:
        self.max_tokens = max_tokens
        """The output cap the request is sent with."""
        self._watch = watch or StreamWatch()
        self._reader = reader
        self._encoding = tokenizer_for(model)[0]
        self._pieces: list[str] = []
        self._length = 0
        self.chunks = 0
        """Pieces taken that carried text."""
        self.own_tokens = 0
        """The app's count of the text taken."""
        self.input_tokens = 0
        self.output_tokens = 0
        """The provider's usage, when a chunk reported it."""
        self.finish_reason: str | None = None
        self.cut: str | None = None
        """Why reading stopped early: `CUT_AT_CAP`, `CUT_AT_CODE`, or None."""
        self.arrivals = Arrivals()

    @property
    def text(self) -> str:
        """The reply's text taken so far."""
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def add(self, piece: str) -> bool:
        """Take `piece` of the reply's text; True when reading should stop here."""
        if not piece or self.cut is not None:
            return self.cut is not None
        tokens = self._count(piece)
        over_chunks = self.chunks + 1 > self.max_tokens
        if over_chunks or self.own_tokens + tokens > self.max_tokens * OVERRUN_MARGIN:
            self.cut, self.finish_reason = CUT_AT_CAP, "length"
            return True
        self.chunks += 1
        self.own_tokens += tokens
        if self._reader is not None:
            piece = self._reader.feed(piece)
            if not piece:
                return False
        self._pieces.append(piece)
        self._length += len(piece)
        taken = piece
        if self._watch.stop is not None:
            end = self._watch.stop.end(self.text)
            if end is not None:
                taken = piece[: len(piece) - (self._length - end)]
                self._pieces = [self.text[:end]]
                self._length = end
                self.cut, self.finish_reason = CUT_AT_CODE, "stop"
        self.arrivals.note(self._length)
        if taken and self._watch.on_text is not None:
            self._watch.on_text(taken, self.own_tokens)
        return self.cut is not None

    def usage(self, input_tokens: int, output_tokens: int) -> None:
        """The provider's usage for the reply (its last chunk, or a plain reply's)."""
        self.input_tokens, self.output_tokens = input_tokens, output_tokens

    def finished(self, reason: str | None) -> None:
        """The provider's finish reason, unless the app cut the reply first."""
        if self.cut is None and reason:
            self.finish_reason = reason

    def _count(self, piece: str) -> int:
        if self._encoding is None:
            return max(1, len(piece.encode("utf-8", "replace")) // 3)
        return encoded_length(self._encoding, piece)
