"""One streamed POST to a provider on litellm's own aiohttp session, its reply read under the caps.

litellm's `AsyncHTTPHandler` sends through an httpx client whose transport hands the request on to
litellm's aiohttp session: two HTTP stacks per request, about half of a sub-call's CPU. The lean
route (`openai_route`) posts on that aiohttp session directly: the same session (one connection
pool for the run, whichever path a request takes), litellm's SSL and proxy settings, litellm's
mapping of aiohttp's errors, and the `httpx.HTTPStatusError` carrying the reply that the handler
raises; a reply that keeps the app waiting is `StreamSilent` (`timed`). When litellm uses httpx's own transport instead
(`DISABLE_AIOHTTP_TRANSPORT`, `litellm.force_ipv4`), the request goes through the handler.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any, TypeVar

import httpx

from rlm_desktop.engine.reply_limit import (
    REPLY_LIMIT_BYTES,
    BoundedTransport,
    ReplyTooLarge,
)
from rlm_desktop.engine.reply_stream import StreamSilent, StreamTimes

CONNECT_TIMEOUT_CAP_S = 30.0
IDENTITY = {"Accept-Encoding": "identity"}
"""Compressed replies are not asked for, so the cap counts what is parsed."""
EVENT_STREAM = "text/event-stream"
STREAM_ENVELOPE_FACTOR = 16
"""An event stream wraps each token in its own JSON chunk (a few hundred bytes): it may run to
this many times a plain reply's cap, while no line of it may pass that cap. Its text is held to
`max_tokens` as it arrives (`reply_stream`), so nothing past the cap is kept."""
STREAM_TRANSPORT_TIMEOUT_S = 6 * 3600.0
"""The transport's own limit on a streamed reply: far past any run; `StreamTimes` rule instead."""


T = TypeVar("T")
LineReader = Callable[[bytes], bool]
"""Takes one line of an event stream; True when the rest is not wanted."""


async def proxy_for(handler: Any, url: str) -> str | None:
    """The proxy litellm's transport would send a request to `url` through (from the environment,
    unless litellm is told not to read it); None for none, or when the handler has no aiohttp
    session."""
    transport = aiohttp_transport(handler)
    if transport is None:
        return None
    proxy: str | None = await transport._get_proxy_settings(httpx.Request("POST", url))
    return proxy


def aiohttp_transport(handler: Any) -> Any | None:
    """litellm's aiohttp transport under `handler`'s httpx client, or None when it has none."""
    from litellm.llms.custom_httpx.aiohttp_transport import LiteLLMAiohttpTransport

    transport = handler.client._transport  # httpx keeps the transport it was given here
    if isinstance(transport, BoundedTransport):
        transport = transport.inner
    return transport if isinstance(transport, LiteLLMAiohttpTransport) else None


def status_error(url: str, status: int, headers: Any, content: bytes) -> httpx.HTTPStatusError:
    """The error httpx's `raise_for_status` would raise for this reply."""
    request = httpx.Request("POST", url)
    response = httpx.Response(
        status, headers=list(headers.items()), content=content, request=request
    )
    return httpx.HTTPStatusError(
        f"Client error '{status}' for url '{url}'", request=request, response=response
    )


def _as_handler_reports(error: httpx.HTTPStatusError) -> None:
    """Give a status error the attributes litellm's handler gives it (the reply's text, masked)."""
    from litellm.llms.custom_httpx.http_handler import mask_sensitive_info

    text = mask_sensitive_info(error.response.text)  # type: ignore[no-untyped-call]
    error.message = text  # type: ignore[attr-defined]
    error.text = text  # type: ignore[attr-defined]
    error.status_code = error.response.status_code  # type: ignore[attr-defined]


async def post_stream(
    handler: Any,
    url: str,
    headers: dict[str, str],
    body: str,
    times: StreamTimes,
    read_line: LineReader,
    *,
    proxy: str | None = None,
    limit_bytes: int = REPLY_LIMIT_BYTES,
) -> bytes | None:
    """POST a stream request: an event-stream reply is handed to `read_line` line by line (None
    is returned), any other reply's body is returned whole, at most `limit_bytes` of it.

    The connection is closed as soon as `read_line` wants no more, so the server stops writing.
    Errors are those of `post`, and `StreamSilent` when the reply keeps the app waiting longer
    than `times` allow.
    """
    try:
        transport = aiohttp_transport(handler)
        if transport is None:
            return await _stream_on_handler(
                handler, url, headers, body, times, read_line, limit_bytes
            )
        return await _stream_on_session(
            transport, url, headers, body, times, read_line, proxy, limit_bytes
        )
    except httpx.HTTPStatusError as error:
        _as_handler_reports(error)
        raise


async def _stream_on_session(
    transport: Any,
    url: str,
    headers: dict[str, str],
    body: str,
    times: StreamTimes,
    read_line: LineReader,
    proxy: str | None,
    limit_bytes: int,
) -> bytes | None:
    """`post_stream` on litellm's aiohttp session."""
    from aiohttp import ClientTimeout
    from litellm.llms.custom_httpx.aiohttp_transport import map_aiohttp_exceptions

    session = transport._get_valid_client_session()
    connect = min(times.first_byte_s, CONNECT_TIMEOUT_CAP_S)
    with map_aiohttp_exceptions():
        response = await within(
            session.post(
                url, data=body.encode(), headers={**headers, **IDENTITY},
                allow_redirects=False, proxy=proxy,
                timeout=ClientTimeout(total=STREAM_TRANSPORT_TIMEOUT_S, sock_connect=connect),
            ),
            times.first_byte_s, times, started=False,
        )  # fmt: skip
        reading = _Reading(url, times, read_line, limit_bytes)
        try:
            return await reading.reply(
                response.status, response.headers, response.content.iter_any()
            )
        finally:
            if reading.whole:
                response.release()  # read to its end: the connection is kept for the next
            else:
                response.close()  # the server is told to stop writing


async def _stream_on_handler(
    handler: Any,
    url: str,
    headers: dict[str, str],
    body: str,
    times: StreamTimes,
    read_line: LineReader,
    limit_bytes: int,
) -> bytes | None:
    """`post_stream` through litellm's handler (its own httpx transport)."""
    timeout = httpx.Timeout(STREAM_TRANSPORT_TIMEOUT_S, connect=CONNECT_TIMEOUT_CAP_S)
    request = handler.client.build_request(
        "POST", url, content=body.encode(), headers={**headers, **IDENTITY}, timeout=timeout
    )
    response = await within(
        handler.client.send(request, stream=True), times.first_byte_s, times, started=False
    )
    try:
        reading = _Reading(url, times, read_line, limit_bytes)
        return await reading.reply(response.status_code, response.headers, response.aiter_raw())
    finally:
        await response.aclose()


class _Reading:
    """One reply read: an event stream line by line, any other body whole, under the caps."""

    def __init__(
        self, url: str, times: StreamTimes, read_line: LineReader, limit_bytes: int
    ) -> None:
        self._url = url
        self._times = times
        self._read_line = read_line
        self._limit = limit_bytes
        self.whole = False
        """True once the reply was read to its end (not stopped early, not failed)."""

    async def reply(self, status: int, headers: Any, pieces: AsyncIterator[bytes]) -> bytes | None:
        """None for an event stream (its lines went to `read_line`), else the body."""
        content_type = str(headers.get("Content-Type", "")).lower()
        streamed = status < 400 and EVENT_STREAM in content_type
        kept: list[bytes] = []
        partial = b""
        seen = 0
        async for piece in timed(pieces, self._times):
            seen += len(piece)
            if seen > (self._limit * STREAM_ENVELOPE_FACTOR if streamed else self._limit):
                raise ReplyTooLarge(self._limit)
            if not streamed:
                kept.append(piece)
                continue
            *lines, partial = (partial + piece).split(b"\n")
            if len(partial) > self._limit:
                raise ReplyTooLarge(self._limit)
            if any(self._read_line(line.rstrip(b"\r")) for line in lines):
                return None
        self.whole = True
        if streamed:
            if partial:
                self._read_line(partial.rstrip(b"\r"))
            return None
        content = b"".join(kept)
        if status >= 400:
            raise status_error(self._url, status, headers, content)
        return content


async def timed(pieces: AsyncIterable[T], times: StreamTimes) -> AsyncIterator[T]:
    """`pieces` as they come, or `StreamSilent` when the first takes longer than
    `times.first_byte_s` or a later one longer than `times.silence_s`."""
    iterator = pieces.__aiter__()
    started = False
    while True:
        wait = times.silence_s if started else times.first_byte_s
        try:
            piece = await within(iterator.__anext__(), wait, times, started=started)
        except StopAsyncIteration:
            return
        started = True
        yield piece


async def within(awaitable: Any, seconds: float, times: StreamTimes, *, started: bool) -> Any:
    """`awaitable`'s result, or `StreamSilent` once `seconds` pass without one."""
    try:
        async with asyncio.timeout(seconds):  # not wait_for: no task made for each piece
            return await awaitable
    except TimeoutError:
        raise StreamSilent(_silence_text(times, started=started), started=started) from None


def _silence_text(times: StreamTimes, *, started: bool) -> str:
    if started:
        return (
            f"Timeout: the provider went silent for {times.silence_s:g} s in the middle of its "
            "reply"
        )
    return f"Timeout: the provider sent no reply within {times.first_byte_s:g} s"
