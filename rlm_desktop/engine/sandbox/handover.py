"""Handing a call's documents to its worker: the frames of the protocol's start.

The app sends a header (`init`: everything but the documents), then the context piece by piece
(`context_part`: a document of a list, or a slice of one long text), then `context_end` with the
frame limit, which follows the context's encoded size. Each piece is encoded as it is sent and
the stream is drained as it goes, so the app never holds the encoded context, only the call's
own copy of the documents (for a run's documents kept on disk, `KeptTexts`: each read back as
it is sent), from which a restarted worker is handed them again. The worker
appends the pieces as they come (worker/serve.py), never holding the whole frame beside them.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from typing import Any

from rlm_desktop.engine.kept_documents import KeptTexts
from rlm_desktop.engine.sandbox.connection import FrameWriter

HEADER = struct.Struct(">I")
BYTES_PER_CAP_CHAR = 8
"""Frame bytes allowed per character of the output cap: stdout and stderr, up to 4 UTF-8 bytes each."""
CONTEXT_FACTOR = 2
"""Frame bytes allowed per byte of the context, so a cell can hand it all on to `rlm_query`."""
FRAME_OVERHEAD = 1_000_000
"""Room for everything else in a frame: the error, the answer draft, the field names."""
TEXT_PIECE_CHARS = 1 << 20
"""One long text goes in slices of this many characters."""
DRAIN_BYTES = 1 << 20
"""The stream is drained after each this many bytes: what waits to be sent stays small."""


def frame_limit(output_cap_chars: int, context_bytes: int) -> int:
    """The largest frame the app reads from a worker; a larger announced frame stops the worker.

    An honest worker's largest frames are a cell result (stdout and stderr, each cut at
    `output_cap_chars` characters by the worker, at up to 4 UTF-8 bytes a character, so
    `BYTES_PER_CAP_CHAR` per cap character) and a sub-call that passes the context on
    (`CONTEXT_FACTOR` times its encoded size), plus `FRAME_OVERHEAD`. With the default cap of
    1,000,000 characters and a small context that is 9 MB. The worker is told the limit and cuts its
    own results to fit (and refuses oversized sub-calls), so only a worker whose socket was written
    to by model code ever exceeds it.
    """
    return max(BYTES_PER_CAP_CHAR * output_cap_chars, CONTEXT_FACTOR * context_bytes) + (
        FRAME_OVERHEAD
    )


def encode(message: dict[str, Any]) -> bytes:
    """A frame's body: JSON as UTF-8, lone surrogates (from documents or model code) kept."""
    return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


def frame(message: dict[str, Any]) -> bytes:
    """`message` as a frame: its length, then its body."""
    data = encode(message)
    return HEADER.pack(len(data)) + data


class ContextHandover:
    """The start of one worker's stream: `header` (the `init` message's other fields), then
    `context` in pieces; `frame_limit` is the limit the last hand-over announced."""

    def __init__(self, context: Any, header: dict[str, Any], output_cap_chars: int) -> None:
        self._context = context
        self._header = header
        self._output_cap = output_cap_chars
        self.frame_limit = frame_limit(output_cap_chars, 0)

    def _shape(self) -> tuple[str | None, Iterator[Any]]:
        """How the context travels (`list`, `text`, or None: inside the header) and its pieces."""
        context = self._context
        if isinstance(context, list | KeptTexts):  # kept texts are read back one by one
            return "list", iter(context)
        if isinstance(context, str):
            step = TEXT_PIECE_CHARS
            return "text", (context[at : at + step] for at in range(0, len(context), step))
        return None, iter(())

    async def send(self, writer: FrameWriter) -> int:
        """Write the header, the pieces and the end to `writer`; returns the frame limit."""
        shape, pieces = self._shape()
        extra = {"context_parts": shape} if shape else {"context": self._context}
        head = encode({**self._header, **extra})
        writer.write(HEADER.pack(len(head)) + head)
        size, unsent = len(head), len(head)
        for piece in pieces:
            body = encode({"type": "context_part", "value": piece})
            writer.write(HEADER.pack(len(body)))
            writer.write(body)
            size += len(body)
            unsent += len(body)
            if unsent >= DRAIN_BYTES:
                await writer.drain()
                unsent = 0
        self.frame_limit = frame_limit(self._output_cap, size)
        writer.write(frame({"type": "context_end", "frame_limit": self.frame_limit}))
        return self.frame_limit
