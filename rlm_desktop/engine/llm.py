"""The one adapter over litellm: retries, timeouts, concurrency, usage and cost.

Requests go through `litellm.acompletion`, or, for `openai/` models, through the same litellm
pieces resolved once per run (`openai_route`), which costs a fraction of the CPU per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rlm_desktop.engine.constrained_replies import ReplyConstraint
from rlm_desktop.engine.litellm_loader import load_litellm
from rlm_desktop.engine.openai_route import (
    Route,
    RouteReply,
    UnreadableReply,
    assembled,
    resolve,
    take_plain,
)
from rlm_desktop.engine.pricing import ModelInfo, PriceBook
from rlm_desktop.engine.reply_stream import ReplyAssembler, StreamSilent, StreamTimes, StreamWatch
from rlm_desktop.engine.request_refusals import refuses_the_request
from rlm_desktop.engine.web_page import web_page_answer
from rlm_desktop.providers.connection import cannot_connect, unreachable_address
from rlm_desktop.redact import Redactor

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0
RETRY_AFTER_CAP_S = 120.0
LENGTH_FINISH_REASONS = {"length", "max_tokens"}

LITELLM_PREFIXES = re.compile(r"^(litellm\.)?\w+: (\w+: )?(\w+Exception - )?")
AUTH_STATUS = {401, 403}
AUTH_HINT = " — check the API key"

Message = dict[str, str]
RetryCallback = Callable[[int, float, str], None]

log = logging.getLogger(__name__)


class LLMError(Exception):
    """A request that failed for good (after retries, or with a non-retryable error).

    `status` is the provider's HTTP status when there was one: callers add their own advice for
    401/403 (`AUTH_STATUS`), e.g. where their user sets the key. The message never carries the
    run's key (it is scrubbed before the error is made). `replied` is True when the provider did
    send a reply (one too large to read): it was produced, so it is paid for.
    """

    def __init__(
        self, message: str, attempts: int, status: int | None = None, *, replied: bool = False
    ) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status = status
        self.replied = replied


@dataclass(frozen=True)
class Completion:
    """A reply with its usage. `cost_usd` is None when the model has no known price."""

    content: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    finish_reason: str | None
    latency_s: float
    attempts: int
    stopped_early: str | None = None
    """Why the app cut the reply or capped its counts (`reply_acceptance`), or None."""
    cut: str | None = None
    """Why the app stopped reading the stream early (`reply_stream`: its code block was
    complete, or it reached `max_tokens`), or None."""
    arrivals: tuple[tuple[float, int], ...] = ()
    """(seconds after sending, characters so far) as the reply arrived, bounded."""

    @property
    def truncated(self) -> bool:
        """True when the reply was cut at the output-token limit."""
        return (self.finish_reason or "") in LENGTH_FINISH_REASONS


@dataclass(frozen=True)
class Credentials:
    """Secrets for a run. Never recorded, logged or passed to a worker."""

    api_key: str | None = None

    def __repr__(self) -> str:
        return "Credentials(api_key=***)" if self.api_key else "Credentials(api_key=None)"


class LLMClient:
    """Sends chat requests through litellm under one per-run concurrency limit.

    Every request carries the output-token cap (`max_tokens`), and a reply larger than that cap
    can take (`reply_limit.call_limit`) is not read (`LLMError`, not retried). Error texts are scrubbed
    of the run's key and other secrets before they leave this class.
    """

    def __init__(
        self,
        *,
        prices: PriceBook,
        credentials: Credentials,
        api_base: str | None,
        concurrency: int,
        times: StreamTimes,
        max_retries: int,
    ) -> None:
        self.prices = prices
        self._credentials = credentials
        self._api_base = api_base
        self._semaphore = asyncio.Semaphore(concurrency)
        self._times = times
        self._timeout = times.first_byte_s
        self._max_retries = max_retries
        self._redactor = Redactor.for_run(credentials.api_key)
        self._http: asyncio.Future[Any] | None = None
        self._routes: dict[str, Route | None] = {}
        self._takes_bounded: dict[str, bool] = {}
        self._providers: dict[str, str | None] = {}

    def info(self, model: str) -> ModelInfo:
        """Prices and limits of `model`."""
        return self.prices.info(model)

    def provider_of(self, model: str) -> str | None:
        """The litellm provider a request for `model` goes to (None when litellm cannot tell)."""
        if model not in self._providers:
            try:
                found = load_litellm().get_llm_provider(model=model, api_base=self._api_base)[1]
            except Exception:
                found = None
            self._providers[model] = str(found) if found else None
        return self._providers[model]

    async def complete(
        self,
        model: str,
        messages: list[Message],
        max_output_tokens: int,
        on_retry: RetryCallback | None = None,
        watch: StreamWatch | None = None,
        constraint: ReplyConstraint | None = None,
    ) -> Completion:
        """One chat completion, streamed (see `reply_stream`: `watch` sees its text arrive and may
        end it early), retried with backoff on 429, 5xx, timeouts and dropped connections; a
        connection that never opens (refused, unknown host) fails at once. `constraint` asks the
        server to hold the reply to its shape (`constrained_replies`)."""
        from rlm_desktop.engine.reply_limit import (
            call_limit,
            limited_to,
            too_large,
            too_large_text,
        )

        litellm = load_litellm()
        bounded = await self._bounded_client(litellm, model)
        route = self._route(model) if bounded else None
        limit = call_limit(max_output_tokens)
        attempt = 0
        started = time.monotonic()
        extra = constraint.fields_for(max_output_tokens) if constraint else {}
        while True:
            attempt += 1
            reader = constraint.reader() if constraint and constraint.reader else None
            assembler = ReplyAssembler(model, max_output_tokens, watch, reader)
            try:
                async with self._semaphore:
                    if route is not None:
                        reply = await route.send(
                            bounded["client"], messages, assembler, self._times, limit, extra
                        )
                    else:
                        with limited_to(limit):
                            reply = await self._litellm_stream(
                                litellm, model, messages, assembler, bounded, extra
                            )
                return self._completion(model, reply, time.monotonic() - started, attempt)
            except asyncio.CancelledError:
                raise
            except UnreadableReply as error:
                raise LLMError(self._redactor.text(str(error)), attempt) from error
            except Exception as error:
                if too_large(error):
                    text = too_large_text(limit, max_output_tokens)
                    raise LLMError(text, attempt, replied=True) from error
                status = _status_of(error)
                described = self._redactor.text(_describe(error, status, self._timeout))
                if attempt > self._max_retries or not _is_retryable(error, status):
                    raise LLMError(described, attempt, status) from error
                delay = _retry_delay(error, attempt)
                if on_retry is not None:
                    on_retry(attempt, delay, described)
                await asyncio.sleep(delay)

    async def _litellm_stream(
        self,
        litellm: Any,
        model: str,
        messages: list[Message],
        assembler: ReplyAssembler,
        bounded: dict[str, Any],
        extra: dict[str, Any],
    ) -> RouteReply:
        """A streamed reply through `litellm.acompletion`, for the providers the lean route does
        not serve; a provider's plain reply is taken whole. `extra` fields go in the request's
        body (`response_format` as litellm maps it for the provider, e.g. Ollama's `format`)."""
        from rlm_desktop.engine.provider_post import STREAM_TRANSPORT_TIMEOUT_S, timed, within

        times = self._times
        body = dict(extra)
        shaped = {"response_format": body.pop("response_format")} if "response_format" in body else {}
        if body:
            shaped["extra_body"] = body
        response = await within(
            litellm.acompletion(
                model=model,
                messages=messages,
                max_tokens=assembler.max_tokens,
                timeout=STREAM_TRANSPORT_TIMEOUT_S,
                stream=True,
                stream_options={"include_usage": True},
                num_retries=0,
                max_retries=0,
                **shaped,
                **bounded,
                **self._endpoint_arguments(),
            ),
            times.first_byte_s, times, started=False,
        )  # fmt: skip
        if not hasattr(response, "__aiter__"):
            take_plain(_reply_of(response), assembler)
            return assembled(assembler)
        try:
            async for chunk in timed(response, times):
                if _take_chunk(chunk, assembler):
                    break
        finally:
            await _close_stream(response)
        return assembled(assembler)

    async def prepare(self, *models: str) -> None:
        """Make what the first request to each of `models` needs (litellm, the HTTP client, the
        lean route) before it is sent, so the run's first turn does not wait tens of
        milliseconds for a TLS set-up. What fails here is left for that request to report."""
        litellm = await asyncio.to_thread(load_litellm)
        for model in dict.fromkeys(models):
            try:
                if await self._bounded_client(litellm, model):
                    self._route(model)
            except Exception as error:
                log.debug("preparing %s: %s", model, error)

    async def _bounded_client(self, litellm: Any, model: str) -> dict[str, Any]:
        """`client=` the size-capped HTTP handler, for the providers that take one. It is made
        once per run, in a thread (its TLS set-up would otherwise stall the event loop)."""
        from rlm_desktop.engine.reply_limit import bounded_handler, takes_bounded_client

        takes = self._takes_bounded.get(model)
        if takes is None:
            takes = self._takes_bounded[model] = takes_bounded_client(
                litellm, model, self._api_base
            )
        if not takes:
            return {}
        if self._http is None:
            self._http = asyncio.ensure_future(asyncio.to_thread(bounded_handler, self._timeout))
        elif self._http.done() and not self._http.cancelled() and not self._http.exception():
            return {"client": self._http.result()}
        return {"client": await asyncio.shield(self._http)}

    async def aclose(self) -> None:
        """Close the HTTP client of the run's requests (a new one is made if asked again)."""
        making, self._http = self._http, None
        if making is None:
            return
        try:
            handler = await making
        except Exception:
            return  # it was never made: nothing to close
        await handler.close()

    def _endpoint_arguments(self) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        if self._api_base:
            arguments["api_base"] = self._api_base
        key = self._endpoint_key()
        if key:
            arguments["api_key"] = key
        return arguments

    def _endpoint_key(self) -> str | None:
        """The run's key, or a placeholder for a local server that takes none."""
        if self._credentials.api_key:
            return self._credentials.api_key
        if self._api_base:
            from rlm_desktop.engine.config import PLACEHOLDER_API_KEY

            return PLACEHOLDER_API_KEY
        return None

    def _route(self, model: str) -> Route | None:
        """The lean route to `model` (see `openai_route`), resolved on its first request."""
        if model not in self._routes:
            self._routes[model] = resolve(model, self._api_base, self._endpoint_key())
        return self._routes[model]

    def _completion(
        self, model: str, reply: RouteReply, latency: float, attempts: int
    ) -> Completion:
        return Completion(
            cut=reply.cut,
            arrivals=reply.arrivals,
            content=reply.content,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cost_usd=self.prices.info(model).cost(reply.input_tokens, reply.output_tokens),
            finish_reason=reply.finish_reason,
            latency_s=latency,
            attempts=attempts,
        )


def _reply_of(response: Any) -> RouteReply:
    """The parts of litellm's `ModelResponse` the engine uses."""
    choice = response.choices[0]
    usage = getattr(response, "usage", None)
    return RouteReply(
        content=choice.message.content or "",
        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        finish_reason=getattr(choice, "finish_reason", None),
    )


def _take_chunk(chunk: Any, assembler: ReplyAssembler) -> bool:
    """One litellm stream chunk into `assembler`; True when reading should stop."""
    usage = getattr(chunk, "usage", None)
    if usage is not None:
        assembler.usage(
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
        )
    for choice in getattr(chunk, "choices", None) or ():
        delta = getattr(choice, "delta", None)
        content = getattr(delta, "content", None)
        if isinstance(content, str) and assembler.add(content):
            return True
        finish = getattr(choice, "finish_reason", None)
        if isinstance(finish, str):
            assembler.finished(finish)
    return False


async def _close_stream(response: Any) -> None:
    """Close a litellm stream's connection, so a provider stops writing a reply not read on."""
    stream = getattr(response, "completion_stream", None)
    for closer in (getattr(stream, "aclose", None), getattr(response, "aclose", None)):
        if closer is not None:
            with contextlib.suppress(Exception):
                await closer()
            return


def _status_of(error: Exception) -> int | None:
    if unreachable_address(error) is not None:
        return None  # litellm calls a connection that never opened "HTTP 500"; no server said so
    if _timed_out(error) or isinstance(error, load_litellm().APIConnectionError):
        return None  # litellm calls its own timeout "HTTP 408", a failed connection 500
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


def _is_retryable(error: Exception, status: int | None) -> bool:
    if isinstance(error, StreamSilent):
        return True  # a stuck reply may well go through when sent again
    if status is not None:
        return status in RETRYABLE_STATUS and not refuses_the_request(status, str(error))
    if unreachable_address(error) is not None:
        return False
    name = type(error).__name__
    return any(word in name for word in ("Timeout", "Connection", "ServiceUnavailable"))


def _timed_out(error: Exception) -> bool:
    """True for a request that ran past the run's request timeout."""
    return isinstance(error, load_litellm().Timeout)


def _describe(error: Exception, status: int | None, timeout_s: float) -> str:
    """One line: the status, the provider's message (litellm's text without its repeated
    class-name prefixes, the message of a JSON error body, or what a web page says), a hint."""
    address = unreachable_address(error)
    if address is not None:
        return cannot_connect(address)
    if isinstance(error, StreamSilent):
        return str(error)
    if _timed_out(error):
        return f"Timeout: the provider sent no reply within {timeout_s:g} s"
    text = LITELLM_PREFIXES.sub("", " ".join(str(error).split()))
    text = _body_message(text) or text
    text = web_page_answer(text) or text
    if len(text) > 300:
        text = text[:300] + "…"
    if status:
        prefix = f"HTTP {status}: "
    elif isinstance(error, load_litellm().APIConnectionError):
        prefix = "Connection error: "
    else:
        prefix = f"{type(error).__name__}: "
    hint = AUTH_HINT if status in AUTH_STATUS else ""
    return prefix + text + hint


def _body_message(text: str) -> str | None:
    """The message of a JSON error body in `text`: OpenAI's and Anthropic's `{"error": {"message":
    ...}}`, Ollama's `{"error": "..."}`, or a top-level `message` or `detail`."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        body, _end = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    candidates = (error.get("message") if isinstance(error, dict) else error,)
    for found in (*candidates, body.get("message"), body.get("detail")):
        if isinstance(found, str) and found.strip():
            return " ".join(found.split())
    return None


def _retry_delay(error: Exception, attempt: int) -> float:
    """The server's `Retry-After` when it gives a usable one, else exponential backoff with jitter."""
    retry_after = _retry_after_seconds(error)
    if retry_after is not None:
        return min(retry_after, RETRY_AFTER_CAP_S)
    ceiling = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (attempt - 1))
    return random.uniform(ceiling / 2, ceiling)


def _retry_after_seconds(error: Exception) -> float | None:
    """`Retry-After` in seconds (a number or an HTTP date); None when absent or not understood."""
    headers: Any = getattr(error, "litellm_response_headers", None)
    if headers is None:
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after") or headers.get("Retry-After")
    if not value:
        return None
    seconds: float | None
    try:
        seconds = float(value)
    except ValueError:
        seconds = _seconds_until(str(value))
    return max(0.0, seconds) if seconds is not None and math.isfinite(seconds) else None


def _seconds_until(http_date: str) -> float | None:
    try:
        moment = email.utils.parsedate_to_datetime(http_date)
        return moment.timestamp() - time.time()
    except (ValueError, TypeError, OverflowError):
        return None
