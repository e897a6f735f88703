"""The worker's side of the protocol: length-prefixed JSON frames over the socket to the parent."""

from __future__ import annotations

import json
import struct
import threading
from typing import Any

HEADER = struct.Struct(">I")


class MessageTooLarge(ValueError):
    """A message is larger than the app accepts from a worker (it would stop the worker)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{megabytes(size)} is over the {megabytes(limit)} limit")
        self.size = size
        self.limit = limit


def megabytes(size: int) -> str:
    """A size in bytes as the worker's messages say it (`1.5 MB`)."""
    return f"{size / 1e6:.1f} MB"


def encode(message: dict[str, Any]) -> bytes:
    """A message's frame body: JSON as UTF-8, lone surrogates (from model code's text) kept."""
    return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


class Channel:
    """Framed JSON over the two protocol pipes; `send` is safe from any thread.

    `limit` is the largest frame the app accepts (it sends it in the init message); the app stops a
    worker that sends more, so `send` refuses such a message instead.
    """

    def __init__(self, reader: Any, writer: Any) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = threading.Lock()
        self.limit: int | None = None

    def send(self, message: dict[str, Any]) -> None:
        data = encode(message)
        if self.limit is not None and len(data) > self.limit:
            raise MessageTooLarge(len(data), self.limit)
        with self._lock:
            self._writer.write(HEADER.pack(len(data)) + data)
            self._writer.flush()

    def receive(self) -> dict[str, Any] | None:
        header = self._reader.read(HEADER.size)
        if len(header) < HEADER.size:
            return None
        (length,) = HEADER.unpack(header)
        result: dict[str, Any] = json.loads(self._reader.read(length))
        return result
