"""Model names for the pickers: litellm's bundled price map, and local servers' own lists.

litellm's bundled price map, read without importing litellm (which takes seconds), gives
the completion list at start-up. Local servers are asked over HTTP: an OpenAI-compatible server's
`/v1/models`, or Ollama's `/api/tags`, read up to a cap (`http_json`); a server that takes the
connection and says nothing in time is busy (`ServerBusy`), not down. Everything here is plain
Python, run in a worker thread.
"""

from __future__ import annotations

import urllib.error
from typing import Any
from urllib.parse import urlsplit

from rlm_desktop.litellm_files import bundled_price_map
from rlm_desktop.providers.connection import (
    accepted_but_silent,
    address_of,
    cannot_connect,
    still_busy,
    unreachable_address,
)
from rlm_desktop.providers.http_json import UnusableReply, fetch_json

CHAT_MODES = {"chat", "responses"}
FAVOURITES = (
    "openai/gpt-5",
    "openai/gpt-5-nano",
    "anthropic/claude-sonnet-4-5",
    "anthropic/claude-haiku-4-5",
    "gemini/gemini-2.5-flash",
    "gemini/gemini-2.5-pro",
)


class DiscoveryError(RuntimeError):
    """A local server could not be asked for its models; the message says what to check.

    `status` is the HTTP status the server answered with, when it answered with an error.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ServerUnreachable(DiscoveryError):
    """Nothing answered: the connection was refused, the host is unknown, or it timed out."""


class ServerBusy(ServerUnreachable):
    """The server took the connection and sent nothing back in time: it is busy, not down."""


def litellm_model_names(default_model: str) -> list[str]:
    """Chat model names from litellm's bundled price map, as `provider/model` strings:
    `default_model` first, then the favourites, then the rest in order."""
    names: list[str] = []
    for key, entry in bundled_price_map().items():
        if entry.get("mode") not in CHAT_MODES:
            continue
        provider = str(entry.get("litellm_provider") or "")
        if not provider or "-" in provider:
            continue
        names.append(key if key.startswith(f"{provider}/") else f"{provider}/{key}")
    first = list(dict.fromkeys((default_model, *FAVOURITES)))
    rest = sorted(set(names) - set(first))
    return [*first, *rest]


def is_web_address(url: str) -> bool:
    """True for an http(s) URL that names a host."""
    try:
        parts = urlsplit(url.strip())
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def _get_json(url: str, api_key: str | None, timeout_s: float) -> Any:
    address = address_of(url)
    if not is_web_address(url):
        raise DiscoveryError(f"{url} is not a web address: write it as http://HOST:PORT")
    try:
        return fetch_json(url, timeout_s=timeout_s, api_key=api_key)
    except urllib.error.HTTPError as exc:
        raise DiscoveryError(
            f"{url} answered HTTP {exc.code}: check the base URL", exc.code
        ) from exc
    except UnusableReply as exc:
        raise DiscoveryError(f"{url} {exc}: check the base URL") from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        unreachable = unreachable_address(exc, fallback=address)
        if unreachable is not None:
            raise ServerUnreachable(cannot_connect(unreachable)) from exc
        if accepted_but_silent(exc):
            raise ServerBusy(still_busy(address, timeout_s)) from exc
        if isinstance(getattr(exc, "reason", exc), TimeoutError):
            raise ServerUnreachable(
                f"{address} did not answer within {timeout_s:g} s — is the server running?"
            ) from exc
        reason = getattr(exc, "reason", exc)
        raise DiscoveryError(f"cannot reach {url} ({reason}): is the server running?") from exc


def discover_openai_compatible(
    base_url: str, api_key: str | None = None, timeout_s: float = 3.0
) -> list[str]:
    """The models an OpenAI-compatible server lists at `<base_url>/models`, as `openai/<id>`."""
    base = base_url.strip().rstrip("/")
    if not base:
        return []
    data = _get_json(f"{base}/models", api_key, timeout_s)
    entries = data.get("data", []) if isinstance(data, dict) else []
    return [f"openai/{e['id']}" for e in entries if isinstance(e, dict) and e.get("id")]


def discover_ollama(base_url: str, timeout_s: float = 3.0) -> list[str]:
    """The models an Ollama server has pulled (`/api/tags`), as `ollama_chat/<name>`."""
    base = base_url.strip().rstrip("/")
    if not base:
        return []
    data = _get_json(f"{base}/api/tags", None, timeout_s)
    entries = data.get("models", []) if isinstance(data, dict) else []
    return [f"ollama_chat/{e['name']}" for e in entries if isinstance(e, dict) and e.get("name")]
