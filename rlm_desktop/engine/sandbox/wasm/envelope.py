"""The envelopes between the app and the wasm host process, over the host's stdin and stdout.

Each envelope is a guest number, a length and that many bytes. Guest 0 is the host itself: its
bodies are JSON control messages. Any other number is that guest's byte stream, the worker
protocol's frames as the guest wrote them (the app reads and checks those as it reads a kernel
worker's socket).
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO

HEADER_SIZE = 8
CONTROL = 0
"""The guest number of the host's own control messages."""
CHUNK = 1 << 20
"""The most bytes of a stream one envelope carries."""


def pack(guest: int, body: bytes) -> bytes:
    """One envelope's bytes."""
    return guest.to_bytes(4, "big") + len(body).to_bytes(4, "big") + body


def control(message: dict[str, Any]) -> bytes:
    """A control message's envelope."""
    return pack(CONTROL, json.dumps(message).encode())


def read_envelope(stream: BinaryIO) -> tuple[int, bytes] | None:
    """The next envelope from `stream`, or None at its end (or in the middle of one)."""
    header = _read_exactly(stream, HEADER_SIZE)
    if header is None:
        return None
    guest, length = int.from_bytes(header[:4], "big"), int.from_bytes(header[4:], "big")
    body = _read_exactly(stream, length)
    return None if body is None else (guest, body)


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    parts: list[bytes] = []
    left = size
    while left:
        part = stream.read(left)
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)
