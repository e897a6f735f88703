"""A size cap on provider replies, enforced while the body is read.

litellm reads a reply whole before it parses it, so a provider (or a proxy) that sends hundreds of
megabytes would make the app hold them, and several copies of them, in memory; and a provider that
ignores `max_tokens` would hand back, and bill, far more output than the call's budget hold. Each
call's reply is cut at what its `max_tokens` can take (`call_limit`), never above
`REPLY_LIMIT_BYTES`. litellm takes the HTTP client to use per request (`client=`, an
`AsyncHTTPHandler`) for most providers: this module makes one whose transport stops reading a reply
as soon as it passes the cap of the call in progress (`limited_to`), or at once when its declared
length does, and raises `ReplyTooLarge`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpx

from rlm_desktop.engine.litellm_loader import tls_configuration

KILOBYTE = 1024
MEGABYTE = 1024 * 1024
REPLY_LIMIT_BYTES = 16 * MEGABYTE
"""The most any reply is read, whatever its `max_tokens`."""
BYTES_PER_TOKEN = 32
"""Room per output token in a reply's JSON: a token is a few characters, and a character escaped
as JSON takes up to 12 bytes (an emoji as two `\\uXXXX`); honest replies stay far below."""
REPLY_OVERHEAD_BYTES = 64 * KILOBYTE
"""Room for the rest of a reply: its envelope, usage, a refusal or a tool-call field."""

TOO_LARGE_MARK = "size cap and was not read"
_CALL_LIMIT: ContextVar[int | None] = ContextVar("rlm_reply_limit", default=None)


def call_limit(max_output_tokens: int) -> int:
    """The bytes a reply to a request of `max_output_tokens` is read up to."""
    return min(REPLY_LIMIT_BYTES, max_output_tokens * BYTES_PER_TOKEN + REPLY_OVERHEAD_BYTES)


@contextmanager
def limited_to(limit_bytes: int) -> Iterator[None]:
    """Replies read (through a `BoundedTransport`) in this context stop at `limit_bytes`."""
    token = _CALL_LIMIT.set(limit_bytes)
    try:
        yield
    finally:
        _CALL_LIMIT.reset(token)


def size_text(size: int) -> str:
    """`size` bytes as "16 MB" or "192 KB" (binary units, as the caps are set)."""
    if size >= MEGABYTE:
        return f"{size / MEGABYTE:.1f}".removesuffix(".0") + " MB"
    return f"{size / KILOBYTE:.0f} KB"


class ReplyTooLarge(Exception):
    """A provider's reply passed the size cap; reading stopped there."""

    def __init__(self, limit_bytes: int) -> None:
        super().__init__(f"the provider's reply passed the {size_text(limit_bytes)} {TOO_LARGE_MARK}")
        self.limit_bytes = limit_bytes


class _BoundedStream(httpx.AsyncByteStream):
    def __init__(self, inner: Any, limit_bytes: int) -> None:
        self._inner = inner
        self._limit = limit_bytes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._limit:
                raise ReplyTooLarge(self._limit)
            yield chunk

    async def aclose(self) -> None:
        close = getattr(self._inner, "aclose", None)
        if close is not None:
            await close()


class BoundedTransport(httpx.AsyncBaseTransport):
    """Wraps another transport; every response body it hands on stops at `limit_bytes`."""

    def __init__(self, inner: httpx.AsyncBaseTransport, limit_bytes: int = REPLY_LIMIT_BYTES):
        self.inner = inner
        """The transport every request goes on to."""
        self._limit = limit_bytes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request`; refuse a reply whose declared length passes the cap (the call's own,
        `limited_to`, when it is lower)."""
        limit = min(self._limit, _CALL_LIMIT.get() or self._limit)
        response = await self.inner.handle_async_request(request)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await response.aclose()
            raise ReplyTooLarge(limit)
        response.stream = _BoundedStream(response.stream, limit)
        return response

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self.inner.aclose()


HANDLER_PROVIDERS = frozenset({
    "anthropic", "anthropic_text", "azure_ai", "bytez", "cloudflare", "cohere", "cohere_chat",
    "cometapi", "compactifai", "custom_openai", "databricks", "datarobot", "deepseek",
    "fireworks_ai", "gemini", "gradient_ai", "groq", "heroku", "huggingface", "lemonade",
    "mistral", "oci", "ollama", "ollama_chat", "openai", "openrouter", "ovhcloud",
    "sagemaker_chat", "snowflake", "triton", "vercel_ai_gateway", "vertex_ai_beta",
    "watsonx_text", "xai",
})  # fmt: skip
"""Providers whose chat requests litellm 1.80 sends through its own `AsyncHTTPHandler`, and so
through one given as `client` (read from litellm's `main.completion`); litellm's OpenAI-compatible
providers take that path too. The others (Azure, Bedrock, ...) keep litellm's own client."""


def takes_bounded_client(litellm: Any, model: str, api_base: str | None) -> bool:
    """True when a request to `model` can be given the capped client."""
    try:
        provider = litellm.get_llm_provider(model=model, api_base=api_base)[1]
    except Exception:
        return False  # litellm will say what is wrong with the name when the request is made
    return provider in HANDLER_PROVIDERS or provider in litellm.openai_compatible_providers


def bounded_handler(timeout_s: float, limit_bytes: int = REPLY_LIMIT_BYTES) -> Any:
    """A litellm `AsyncHTTPHandler` whose every reply stops at `limit_bytes`.

    It keeps litellm's own transport (its loop-aware aiohttp one by default) underneath; compressed
    replies are not asked for, so the cap counts what is parsed. Close it with `aclose()`.
    """
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 30.0))
    handler = AsyncHTTPHandler(timeout=timeout, ssl_verify=tls_configuration())
    client = handler.client
    # httpx has no public way to wrap a client's transport once made; litellm made this one.
    client._transport = BoundedTransport(client._transport, limit_bytes)
    client.headers["Accept-Encoding"] = "identity"
    return handler


def too_large_text(limit_bytes: int, max_output_tokens: int) -> str:
    """What a call that got an oversized reply failed with."""
    if limit_bytes >= REPLY_LIMIT_BYTES:
        return (
            f"the provider's reply was larger than {size_text(limit_bytes)} and was not read "
            "(the output-token cap was sent; a reply that size is not an answer)"
        )
    return (
        f"the provider's reply was larger than {size_text(limit_bytes)}, more than "
        f"{max_output_tokens:,} output tokens (the max_tokens it was sent) can take, and was "
        "not read: the provider ignored the output-token cap; the call counts what it held"
    )


def too_large(error: BaseException) -> bool:
    """True when `error` is, or wraps, a `ReplyTooLarge` (litellm and the SDK re-raise it as their
    own connection error, keeping it as the cause or at least its message)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ReplyTooLarge) or TOO_LARGE_MARK in str(current):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
