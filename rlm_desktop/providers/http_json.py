"""One JSON request to a server, its reply read up to a cap and a deadline, never whole.

What a server answers is untrusted: a broken or hostile one could send gigabytes, or a byte a
second for ever. A reply is read in pieces, at most `MAX_REPLY_BYTES`, and within `2 × timeout_s`
in all (each wait on the socket is bounded by `timeout_s`, and so is the time spent reading).
Errors are urllib's own (`HTTPError`, `URLError`, `TimeoutError`); a reply too large, too slow
or not JSON is a `ValueError` (`UnusableReply`).
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Mapping
from typing import Any

MAX_REPLY_BYTES = 2_000_000
PIECE_BYTES = 65_536


class UnusableReply(ValueError):
    """The server answered, but with more than the cap, too slowly, or not with JSON; the
    message says which, as a predicate ("did not answer with JSON")."""


def fetch_json(
    url: str,
    *,
    timeout_s: float,
    api_key: str | None = None,
    body: Mapping[str, Any] | None = None,
    max_bytes: int = MAX_REPLY_BYTES,
) -> Any:
    """The JSON `url` answers: a GET, or a POST of `body` when one is given."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Accept": "application/json"})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
        raw = _read_bounded(response, max_bytes, time.monotonic() + timeout_s)
    try:
        return json.loads(raw.decode("utf-8"))
    except ValueError as error:  # UnicodeDecodeError is one too
        raise UnusableReply("did not answer with JSON") from error


def _read_bounded(response: Any, max_bytes: int, deadline: float) -> bytes:
    pieces: list[bytes] = []
    size = 0
    while piece := response.read1(PIECE_BYTES):
        size += len(piece)
        if size > max_bytes:
            raise UnusableReply(f"answered with more than {max_bytes:,} bytes")
        if time.monotonic() > deadline:
            raise UnusableReply("answered too slowly")
        pieces.append(piece)
    return b"".join(pieces)
