"""A connection that never opened (refused, or an unknown host), or one that opened on a server
too busy to answer, told apart and said one way.

A connection that never opened is not worth retrying and is not the server's error: litellm
reports it as an `APIConnectionError` or as an `InternalServerError` with status 500, so it is
recognised by what caused it, a `ConnectionRefusedError` or a failed name lookup
(`socket.gaierror`). A connection that opened and then stayed silent is a server at work: a local
server that generates one reply at a time (llama-cpp-python) answers nothing else meanwhile, its
model list included, and goes on generating after the client that asked has gone.
"""

from __future__ import annotations

import re
import socket
from urllib.parse import urlsplit

_CANNOT_CONNECT = re.compile(r"Cannot connect to host (\S+?:\d+)")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def cannot_connect(address: str) -> str:
    """The one sentence for a server that could not be reached at `address` (HOST:PORT)."""
    return f"cannot connect to {address} — is the server running?"


def still_busy(address: str, timeout_s: float) -> str:
    """The one sentence for a server at `address` that took the connection and said nothing."""
    return (
        f"the server at {address} accepted the connection but has not answered in "
        f"{timeout_s:g} s: it is probably still generating (a previous run's reply?) — wait, "
        "or restart it"
    )


def may_still_generate(address: str) -> str:
    """The one sentence for a run stopped while the server at `address` was writing a reply."""
    return (
        f"the server at {address} may still be generating the reply it was asked for (a local "
        "server goes on after the app stops listening, and may not answer until it is done)"
    )


def accepted_but_silent(error: BaseException) -> bool:
    """True when urllib's request timed out after the connection opened, waiting for the reply:
    urllib raises the socket's own `TimeoutError` then, and wraps one while connecting in a
    `URLError` (which is not a `TimeoutError`)."""
    return isinstance(error, TimeoutError)


def address_of(url: str) -> str:
    """HOST:PORT of a URL, with the scheme's default port when it names none."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port or _DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return url.strip()
    if not host:
        return url.strip()
    return f"{host}:{port}" if port else host


def unreachable_address(error: BaseException, fallback: str = "the server") -> str | None:
    """HOST:PORT when `error` comes from a refused connection or an unknown host, else None.

    The address is read from the exceptions in the chain (aiohttp's `host`/`port`, or its
    "Cannot connect to host HOST:PORT" message); `fallback` when none of them names it.
    """
    chain = _chain(error)
    if not any(isinstance(e, ConnectionRefusedError | socket.gaierror) for e in chain):
        return None
    for link in chain:
        host, port = getattr(link, "host", None), getattr(link, "port", None)
        if isinstance(host, str) and host and isinstance(port, int):
            return f"{host}:{port}"
        found = _CANNOT_CONNECT.search(str(link))
        if found:
            return found.group(1)
    return fallback


def _chain(error: BaseException) -> list[BaseException]:
    """`error` and what caused it: `__cause__`, `__context__` and urllib's `reason`."""
    seen: list[BaseException] = []
    pending: list[BaseException] = [error]
    while pending and len(seen) < 32:
        link = pending.pop(0)
        if any(link is e for e in seen):
            continue
        seen.append(link)
        reason = getattr(link, "reason", None)
        for nxt in (link.__cause__, link.__context__, reason):
            if isinstance(nxt, BaseException):
                pending.append(nxt)
    return seen
