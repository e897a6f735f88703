"""The worker's side of the protocol: length-prefixed JSON frames over the socket to the parent,
a frame followed by raw bytes where it says so (`attached`)."""

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

    def send(self, message: dict[str, Any], attachment: bytes | None = None) -> None:
        """Send `message`; `attachment`, raw bytes, follows its frame (its size is the frame's
        `attached`), which spares binary data JSON's escapes and base64."""
        if attachment is not None:
            message = {**message, "attached": len(attachment)}
        data = encode(message)
        size = max(len(data), len(attachment or b""))
        if self.limit is not None and size > self.limit:
            raise MessageTooLarge(size, self.limit)
        with self._lock:
            self._writer.write(HEADER.pack(len(data)) + data)
            if attachment is not None:
                self._writer.write(attachment)
            self._writer.flush()

    def receive(self) -> dict[str, Any] | None:
        """The next message, its attachment (if it has one) as bytes under `attachment`."""
        header = self._reader.read(HEADER.size)
        if len(header) < HEADER.size:
            return None
        (length,) = HEADER.unpack(header)
        result: dict[str, Any] = json.loads(self._reader.read(length))
        attached = result.get("attached")
        if isinstance(attached, int) and attached >= 0:
            result["attachment"] = self._reader.read(attached)
        return result
