"""What a local server says of itself and the models it serves: what software it is, and the
context window it gives each model.

A server knows the window it was started with, which may be far smaller than the model's own
(a 128k model served with `--ctx-size 32768`), and the engine would otherwise assume litellm's
figure or 128,000 tokens. Each kind of server is asked where it says so:

| server | asked | read |
|---|---|---|
| llama.cpp (`llama-server`) | `GET /props` | `default_generation_settings.n_ctx` (one slot's) |
| LM Studio | `GET /api/v0/models` | `loaded_context_length`, else `max_context_length` |
| vLLM | `GET /v1/models` | `max_model_len` |
| Ollama | `GET /api/ps`, `POST /api/show` | the loaded model's `context_length`, else `num_ctx` in `parameters`, else `<arch>.context_length` in `model_info` |

llama-cpp-python says nothing of its window (its `/v1/models` lists ids only, and `/props` is
not one of its routes). What software a server is (`ServerFacts.software`) is read from the same
answers: llama.cpp answers `/props`, LM Studio `/api/v0/models`, and each lists its models with
its own `owned_by` (llama.cpp "llamacpp", llama-cpp-python "me", vLLM "vllm", Ollama "library");
an `ollama/` model is Ollama's. The questions go out together, each with a short timeout and a bounded
read (`http_json`); a server that does not answer, answers garbage or answers too much tells
nothing. Nothing here raises: facts only ever improve what the engine assumes.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from rlm_desktop.providers import registry
from rlm_desktop.providers.base_url import server_root
from rlm_desktop.providers.catalog import is_web_address
from rlm_desktop.providers.http_json import fetch_json

log = logging.getLogger(__name__)

FACTS_TIMEOUT_S = 2.0
SMALLEST_WINDOW = 64
LARGEST_WINDOW = 100_000_000
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)

LLAMA_CPP = "llama.cpp"
LLAMA_CPP_PYTHON = "llama-cpp-python"
VLLM = "vLLM"
OLLAMA = "Ollama"
LM_STUDIO = "LM Studio"
_LM_STUDIO_FIELDS = {"state", "max_context_length", "loaded_context_length"}
"""Fields of LM Studio's own listing that an OpenAI-style one lacks."""
_OWNERS = {"llamacpp": LLAMA_CPP, "me": LLAMA_CPP_PYTHON, "vllm": VLLM, "library": OLLAMA}

Answers = Mapping[str, Any]
"""What each question got back, by its name (None when it got nothing usable)."""


@dataclass(frozen=True)
class Window:
    """The context window (prompt plus reply, in tokens) a server gives a model, and where it
    said so (e.g. "llama.cpp /props")."""

    tokens: int
    source: str


@dataclass(frozen=True)
class ServerFacts:
    """What a server said: the window it gives each model it named one for, and what software
    it is (one of the names above, or None when it did not tell)."""

    windows: dict[str, Window]
    software: str | None = None


def context_windows(
    api_base: str,
    models: Sequence[str],
    api_key: str | None = None,
    timeout_s: float = FACTS_TIMEOUT_S,
) -> dict[str, Window]:
    """The window the server at `api_base` gives each of `models` (litellm model strings), for
    those it says one for. Takes at most about `2 × timeout_s`."""
    return server_facts(api_base, models, api_key, timeout_s).windows


def server_facts(
    api_base: str,
    models: Sequence[str],
    api_key: str | None = None,
    timeout_s: float = FACTS_TIMEOUT_S,
) -> ServerFacts:
    """What the server at `api_base` says of itself and of `models` (litellm model strings).
    Takes at most about `2 × timeout_s`."""
    if not models or not is_web_address(api_base):
        return ServerFacts({})
    base, root = api_base.strip().rstrip("/"), server_root(api_base)
    ask = partial(fetch_json, timeout_s=timeout_s)
    questions: dict[str, Callable[[], Any]] = {}
    if any(not _is_ollama(m) for m in models):
        questions["props"] = partial(ask, f"{root}/props")
        questions["lm_studio"] = partial(ask, f"{root}/api/v0/models")
        questions["listing"] = partial(ask, f"{base}/models", api_key=api_key)
    for model in models:
        if _is_ollama(model):
            name = _served_name(model)
            questions["ps"] = partial(ask, f"{root}/api/ps")
            questions[f"show {model}"] = partial(
                ask, f"{root}/api/show", body={"model": name, "name": name}
            )
    answers = _ask_together(questions, deadline=time.monotonic() + 2 * timeout_s + 0.5)
    found: dict[str, Window] = {}
    for model in dict.fromkeys(models):
        window = _ollama_window(answers, model) if _is_ollama(model) else _window(answers, model)
        if window is not None:
            found[model] = window
    return ServerFacts(found, _software(answers, models))


def _software(answers: Answers, models: Sequence[str]) -> str | None:
    """What software the server is, from what it answered."""
    if any(_is_ollama(model) for model in models):
        return OLLAMA
    if _llama_cpp(answers.get("props")) is not None:
        return LLAMA_CPP
    listing = answers.get("listing")
    entries = listing.get("data") if isinstance(listing, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, dict):
            continue
        owner = entry.get("owned_by")
        if isinstance(owner, str) and owner in _OWNERS:
            return _OWNERS[owner]
        if "max_model_len" in entry:
            return VLLM
    lm_studio = answers.get("lm_studio")
    entries = lm_studio.get("data") if isinstance(lm_studio, dict) else None
    if isinstance(entries, list) and any(
        isinstance(entry, dict) and _LM_STUDIO_FIELDS & entry.keys() for entry in entries
    ):
        return LM_STUDIO
    return None


def _ask_together(questions: Mapping[str, Callable[[], Any]], deadline: float) -> dict[str, Any]:
    """Each question's answer (None for one that failed or was not done by `deadline`). The
    threads are daemons: one a server keeps waiting is left behind, never waited for."""
    answers: dict[str, Any] = {}

    def ask(name: str, question: Callable[[], Any]) -> None:
        try:
            answers[name] = question()
        except Exception as error:  # a server's fault, or none: the facts are only a help
            log.debug("server facts: %s: %s", name, error)

    threads = [
        threading.Thread(target=ask, args=item, name=f"server facts: {item[0]}", daemon=True)
        for item in questions.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return {name: answers.get(name) for name in questions}


def _window(answers: Answers, model: str) -> Window | None:
    """An OpenAI-compatible server's window for `model`: the window it runs with first."""
    served = _served_name(model)
    for found in (
        _llama_cpp(answers.get("props")),
        _lm_studio(answers.get("lm_studio"), served),
        _vllm(answers.get("listing"), served),
    ):
        if found is not None:
            return found
    return None


def _llama_cpp(props: Any) -> Window | None:
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    tokens = _tokens(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return Window(tokens, "llama.cpp /props") if tokens else None


def _lm_studio(listing: Any, served: str) -> Window | None:
    entry = _entry(listing, "data", ("id",), served)
    if entry is None:
        return None
    tokens = _tokens(entry.get("loaded_context_length")) or _tokens(entry.get("max_context_length"))
    return Window(tokens, "LM Studio /api/v0/models") if tokens else None


def _vllm(listing: Any, served: str) -> Window | None:
    entry = _entry(listing, "data", ("id",), served)
    tokens = _tokens(entry.get("max_model_len")) if entry is not None else None
    return Window(tokens, "/v1/models max_model_len") if tokens else None


def _ollama_window(answers: Answers, model: str) -> Window | None:
    served = _served_name(model)
    loaded = _entry(answers.get("ps"), "models", ("name", "model"), served)
    tokens = _tokens(loaded.get("context_length")) if loaded is not None else None
    if tokens:
        return Window(tokens, "Ollama /api/ps")
    shown = answers.get(f"show {model}")
    if not isinstance(shown, dict):
        return None
    parameters = shown.get("parameters")
    num_ctx = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    tokens = _tokens(int(num_ctx.group(1))) if num_ctx else None
    if tokens:
        return Window(tokens, "Ollama /api/show num_ctx")
    tokens = _trained_length(shown.get("model_info"))
    return Window(tokens, "Ollama /api/show model_info") if tokens else None


def _trained_length(info: Any) -> int | None:
    """`<architecture>.context_length` of Ollama's `model_info` (any `*.context_length` when the
    architecture is not named)."""
    if not isinstance(info, dict):
        return None
    architecture = info.get("general.architecture")
    named = info.get(f"{architecture}.context_length") if isinstance(architecture, str) else None
    if tokens := _tokens(named):
        return tokens
    for key, value in info.items():
        if isinstance(key, str) and key.endswith(".context_length") and (tokens := _tokens(value)):
            return tokens
    return None


def _entry(listing: Any, key: str, names: Sequence[str], served: str) -> dict[str, Any] | None:
    """The entry of `listing[key]` one of whose `names` fields is `served` (Ollama's `:latest`
    tag aside)."""
    entries = listing.get(key) if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    wanted = _untagged(served)
    for entry in entries:
        if isinstance(entry, dict) and any(
            isinstance(entry.get(name), str) and _untagged(entry[name]) == wanted for name in names
        ):
            return entry
    return None


def _tokens(value: Any) -> int | None:
    """A window size from a server: a whole, plausible number of tokens, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value != int(value):
        return None
    tokens = int(value)
    return tokens if SMALLEST_WINDOW <= tokens <= LARGEST_WINDOW else None


def _is_ollama(model: str) -> bool:
    return registry.provider_for_model(model) == "ollama"


def _served_name(model: str) -> str:
    """The name the server knows the model by: the model string without its litellm prefix."""
    return registry.split_model(model)[1]


def _untagged(name: str) -> str:
    return name.removesuffix(":latest")
