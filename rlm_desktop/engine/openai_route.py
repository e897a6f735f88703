"""The lean way through litellm to an OpenAI-style chat endpoint, resolved once per run and model.

`litellm.acompletion` redoes per request what a run's requests to one model share (provider and
endpoint resolution, parameter mapping, headers) and adds work the engine does not use (a thread
hop for its synchronous half, its callback and logging machinery, a response object, a cost it
computes from its own price map): about 1.5 ms of CPU a request. For models litellm serves with its
plain `OpenAIGPTConfig` (the `openai/` provider: OpenAI itself and any OpenAI-compatible server
given as `api_base`), a `Route` asks litellm's own pieces once (`get_llm_provider`, the provider
config's parameter mapping, headers and URL) and then, per request, uses that config's
`transform_request`, the aiohttp session under litellm's HTTP handler (the run's pooled one; see
`provider_post`, which also caps the reply) and litellm's error mapping, so a failure reads
exactly as it does through `acompletion`. Every other provider keeps `acompletion`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.litellm_loader import load_litellm
from rlm_desktop.engine.reply_stream import ReplyAssembler, StreamSilent, StreamTimes
from rlm_desktop.engine.web_page import API_BASE_HINT, web_page_answer

if TYPE_CHECKING:
    from rlm_desktop.engine.provider_post import LineReader

LEAN_PROVIDER = "openai"
DEFAULT_API_BASE = "https://api.openai.com/v1"
BASE_HANDLER_SWITCH = "EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER"


class UnreadableReply(Exception):
    """A successful reply that is not a chat completion: a web page, a proxy's notice, another
    API's answer. Typically the API base names the wrong address; trying again will not help."""


@dataclass(frozen=True)
class RouteReply:
    """What the engine reads from a reply: its text, reported usage and finish reason."""

    content: str
    input_tokens: int
    output_tokens: int
    finish_reason: str | None
    cut: str | None = None
    """Why the app stopped reading early (`reply_stream.CUT_AT_CAP`, `CUT_AT_CODE`), or None."""
    arrivals: tuple[tuple[float, int], ...] = ()
    """(seconds after sending, characters so far) as the reply arrived (see `Arrivals`)."""


def assembled(assembler: ReplyAssembler) -> RouteReply:
    """The reply `assembler` took in."""
    return RouteReply(
        content=assembler.text,
        input_tokens=assembler.input_tokens,
        output_tokens=assembler.output_tokens,
        finish_reason=assembler.finish_reason,
        cut=assembler.cut,
        arrivals=tuple(assembler.arrivals.points),
    )


@dataclass(frozen=True)
class Route:
    """One model's resolved endpoint: its URL, headers and litellm provider config."""

    model: str
    """The model name as sent (without the provider prefix)."""
    asked: str
    """The model name as the run gives it (`openai/...`), for litellm's error messages."""
    url: str
    headers: dict[str, str] = field(repr=False)  # it carries the key
    config: Any
    _mapped: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)
    """litellm's request parameters for each output cap asked for (mapped once each)."""
    _proxies: dict[int, str | None] = field(default_factory=dict, repr=False)
    """The proxy for `url` under each HTTP handler it was sent with (read once each)."""

    async def send(
        self,
        handler: Any,
        messages: list[dict[str, str]],
        assembler: ReplyAssembler,
        times: StreamTimes,
        limit_bytes: int,
        extra: dict[str, Any] | None = None,
    ) -> RouteReply:
        """POST one chat request on `handler` (a litellm `AsyncHTTPHandler`, see `provider_post`)
        for a streamed reply, taken in by `assembler` (a plain reply too), read up to
        `limit_bytes`, with `extra` fields in its body; errors are litellm's own exceptions,
        mapped as `acompletion` maps them."""
        max_tokens = assembler.max_tokens
        litellm = load_litellm()
        optional = self._mapped.get(max_tokens)
        if optional is None:
            optional = self._mapped[max_tokens] = self.config.map_openai_params(
                non_default_params={"max_tokens": max_tokens},
                optional_params={},
                model=self.model,
                drop_params=True,
            )
        data = self.config.transform_request(
            model=self.model,
            messages=messages,
            optional_params=dict(optional),
            litellm_params={},
            headers=self.headers,
        )
        data.update(extra or {})
        data["stream"] = True
        data["stream_options"] = {"include_usage": True}
        from rlm_desktop.engine import provider_post

        try:
            try:
                proxy = await self._proxy(handler)
                body = await provider_post.post_stream(
                    handler, self.url, self.headers, json.dumps(data), times,
                    _stream_reader(assembler, self.url), proxy=proxy, limit_bytes=limit_bytes,
                )  # fmt: skip
            except StreamSilent:
                raise
            except Exception as error:
                _raise_provider_error(error, self.config, self.asked)
            if body is not None:
                take_plain(_read(body), assembler)
            return assembled(assembler)
        except (UnreadableReply, StreamSilent):
            raise
        except Exception as error:
            # litellm's mapping raises the exception `acompletion` would have raised.
            litellm.exception_type(
                model=self.asked,
                custom_llm_provider=LEAN_PROVIDER,
                original_exception=error,
                completion_kwargs={},
                extra_kwargs={},
            )
            raise

    async def _proxy(self, handler: Any) -> str | None:
        from rlm_desktop.engine import provider_post

        key = id(handler)
        if key not in self._proxies:
            self._proxies[key] = await provider_post.proxy_for(handler, self.url)
        return self._proxies[key]


def resolve(model: str, api_base: str | None, api_key: str | None) -> Route | None:
    """The lean route for `model` at `api_base`, or None when litellm serves it some other way
    (another provider, a model with its own config) or the name does not resolve."""
    from litellm.llms.openai.chat.gpt_transformation import OpenAIGPTConfig

    litellm = load_litellm()

    try:
        name, provider, _key, _base = litellm.get_llm_provider(model=model, api_base=api_base)
        if provider != LEAN_PROVIDER:
            return None
        config = litellm.ProviderConfigManager.get_provider_chat_config(
            model=name, provider=litellm.LlmProviders(provider)
        )
    except Exception:
        return None  # acompletion will say what is wrong with the name
    if type(config) is not OpenAIGPTConfig or litellm.OpenAIConfig.get_config():
        return None
    if litellm.headers or litellm.api_base or litellm.api_key or litellm.openai_key:
        return None  # module-wide overrides: leave them to acompletion
    if os.environ.get(BASE_HANDLER_SWITCH, "").strip().lower() != "true":
        return None  # litellm sends `openai/` through the openai SDK instead (litellm_loader)
    # As litellm's `completion` resolves an `openai/` request's endpoint and key.
    base = (
        api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
    ) or DEFAULT_API_BASE
    key = api_key or os.environ.get("OPENAI_API_KEY")
    headers = config.validate_environment(
        headers={}, model=name, messages=[], optional_params={}, litellm_params={},
        api_key=key, api_base=base,
    )  # fmt: skip
    url = config.get_complete_url(
        api_base=base, api_key=key, model=name, optional_params={}, litellm_params={}, stream=False
    )
    return Route(model=name, asked=model, url=url, headers=headers, config=config)


def _raise_provider_error(error: Exception, config: Any, model: str) -> NoReturn:
    """Turn an HTTP error into the provider's error class, as litellm's HTTP handler does; a
    connection that failed (dropped, reset, refused) is litellm's `APIConnectionError`, not the
    "HTTP 500" the handler would call it: no server sent that status."""
    import httpx
    from litellm.llms.custom_httpx.llm_http_handler import BaseLLMHTTPHandler

    if isinstance(error, httpx.TransportError):
        litellm = load_litellm()
        raise litellm.APIConnectionError(
            message=str(error) or type(error).__name__, llm_provider=LEAN_PROVIDER, model=model
        ) from error
    BaseLLMHTTPHandler()._handle_error(e=error, provider_config=config)
    raise error  # not reached: `_handle_error` always raises


def _read(body: bytes) -> RouteReply:
    """The parts of an OpenAI chat-completion body the engine uses."""
    from litellm.litellm_core_utils.core_helpers import map_finish_reason

    try:
        parsed = json.loads(body)
        choice = parsed["choices"][0]
        usage = parsed.get("usage") or {}
        finish = choice.get("finish_reason")
        return RouteReply(
            content=(choice.get("message") or {}).get("content") or "",
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=map_finish_reason(finish) if finish else None,
        )
    except (ValueError, LookupError, TypeError, AttributeError) as error:
        raise UnreadableReply(_not_a_completion(body)) from error


def take_plain(reply: RouteReply, assembler: ReplyAssembler) -> None:
    """A server that does not stream: its whole reply, taken as one piece."""
    assembler.add(reply.content)
    assembler.usage(reply.input_tokens, reply.output_tokens)
    assembler.finished(reply.finish_reason)


def _stream_reader(assembler: ReplyAssembler, url: str) -> LineReader:
    """Reads an OpenAI chat-completion event stream into `assembler`, one line at a time."""
    from litellm.litellm_core_utils.core_helpers import map_finish_reason

    def read_line(line: bytes) -> bool:
        if not line.startswith(b"data:"):
            return False  # comments, event names, keep-alives, blank separators
        payload = line[5:].strip()
        if payload == b"[DONE]":
            return False
        try:
            chunk = json.loads(payload)
        except ValueError as error:
            raise UnreadableReply(_not_a_completion(payload)) from error
        if not isinstance(chunk, dict):
            raise UnreadableReply(_not_a_completion(payload))
        if chunk.get("error"):
            from rlm_desktop.engine.provider_post import status_error

            raise status_error(url, 500, {}, payload)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            assembler.usage(
                _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
            )
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta")
            content = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(content, str) and assembler.add(content):
                return True
            finish = choice.get("finish_reason")
            if isinstance(finish, str):
                assembler.finished(map_finish_reason(finish))
        return False

    return read_line


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _not_a_completion(body: bytes) -> str:
    page = web_page_answer(body[:100_000].decode("utf-8", "replace"))
    if page is not None:
        return page
    shown = fmt.one_line(body[:2000].decode("utf-8", "replace"), 101)
    return f"the server's reply is not a chat completion ({shown!r}): {API_BASE_HINT}"
