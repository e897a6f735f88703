"""Pre-flight: check a run's models, endpoint and key before any request is sent.

One function for the GUI and the command line: `preflight(config, credentials)` lists what would
make the run fail at its first request, so a sentence pasted as a model never starts forty failing
sub-calls. Each problem names the setting to change and says how, in the engine's terms; a message
that starts with its setting's name ("sub_model 'x' is ...") lets a caller name the setting its
own way (`PreflightProblem.worded`). Blocking work (HTTP, reading litellm's tables) runs in threads.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from rlm_desktop.engine.config import DEFAULT_MODEL, RunConfig
from rlm_desktop.engine.litellm_loader import load_litellm
from rlm_desktop.engine.llm import AUTH_STATUS, Credentials
from rlm_desktop.litellm_files import bundled_price_map
from rlm_desktop.providers import base_url, catalog, registry
from rlm_desktop.providers.connection import address_of

MODEL_NAME = re.compile(r"[\w.:/@+~=-]+")
"""The characters of litellm model strings (`bedrock/arn:...`, `ollama_chat/qwen2.5:7b`, ...)."""
SHOWN_CHARS = 40
SHOWN_MODELS = 5
Listing = list[str] | None
"""The models a server lists, as `provider/name`; None when it would not say."""


@dataclass(frozen=True)
class PreflightProblem:
    """One reason the run would fail before it starts, and how to fix it."""

    setting: str
    """What to change: "model", "sub_model", "api_base" or "api_key"."""
    message: str
    """One sentence in the engine's terms that names the fix."""

    def worded(self, names: Mapping[str, str]) -> str:
        """The message with its leading setting name called `names[setting]`, e.g. a CLI flag."""
        name = names.get(self.setting)
        if name and self.message.startswith(f"{self.setting} "):
            return name + self.message[len(self.setting) :]
        return self.message


@dataclass(frozen=True)
class EndpointUnreachable(PreflightProblem):
    """Nothing answered at `api_base`: the environment is at fault, not the settings."""


async def preflight(
    config: RunConfig, credentials: Credentials, *, timeout_s: float = 3.0
) -> list[PreflightProblem]:
    """The problems that would make `config` fail at its first request; empty means good to go.

    Checks that the models are model names litellm can route, that the server at `api_base`
    answers (`/models`, or Ollama's `/api/tags`, within `timeout_s`; one that takes the
    connection and stays silent is said to be busy) and lists them, that a base URL without `/v1`
    is not missing it, and that a key is given where the provider needs one. Nothing is sent to a
    model.
    """
    models = [("model", config.model)]
    if config.effective_sub_model != config.model:
        models.append(("sub_model", config.effective_sub_model))
    problems = [p for setting, model in models if (p := _shape_problem(setting, model))]
    named = [(s, m) for s, m in models if not any(p.setting == s for p in problems)]
    api_base = config.api_base or None
    if api_base is not None and (url_problem := _url_problem(api_base)) is not None:
        problems.append(url_problem)
        api_base = None

    kinds = sorted({_is_ollama(m) for _s, m in named}) if api_base else []
    asks = [_ask_server(api_base or "", o, credentials.api_key, timeout_s) for o in kinds]
    known, answers = await asyncio.gather(
        asyncio.to_thread(_known_to_litellm, [m for _s, m in named]), asyncio.gather(*asks)
    )
    listings: dict[bool, Listing] = {}
    for ollama, answer in zip(kinds, answers, strict=True):
        if isinstance(answer, PreflightProblem):
            problems.append(answer)
            answer = None
        listings[ollama] = answer
    for setting, model in named:
        listing = listings.get(_is_ollama(model))
        problem = _model_problem(setting, model, known[model], listing, api_base or "")
        if problem is not None:
            problems.append(problem)
    if not any(p.setting in ("model", "sub_model") for p in problems):
        problems += _key_problems(config, credentials)
    return list(dict.fromkeys(problems))


def _quoted(text: str) -> str:
    shown = " ".join(text.split())
    if len(shown) > SHOWN_CHARS:
        shown = shown[: SHOWN_CHARS - 1].rstrip() + "…"
    return f"'{shown}'"


def _shape_problem(setting: str, model: str) -> PreflightProblem | None:
    stripped = model.strip()
    if not stripped:
        return PreflightProblem(setting, f"{setting} is empty: name a model, e.g. {DEFAULT_MODEL}")
    if not MODEL_NAME.fullmatch(stripped):
        kind = "is a sentence," if len(stripped.split()) > 1 else "is"
        fix = f"name a litellm model, e.g. {DEFAULT_MODEL}"
        return PreflightProblem(
            setting, f"{setting} {_quoted(model)} {kind} not a model name: {fix}"
        )
    if stripped != model:
        return PreflightProblem(
            setting, f"{setting} '{stripped}' has spaces around it: remove them"
        )
    return None


def _url_problem(api_base: str) -> PreflightProblem | None:
    if api_base != api_base.strip():
        spaced = f"api_base '{api_base.strip()}' has spaces around it: remove them"
        return PreflightProblem("api_base", spaced)
    if catalog.is_web_address(api_base):
        return None
    return PreflightProblem(
        "api_base",
        f"api_base {_quoted(api_base)} is not a web address: write it as http://HOST:PORT/v1",
    )


def _is_ollama(model: str) -> bool:
    return registry.provider_for_model(model) == "ollama"


def _known_to_litellm(models: Sequence[str]) -> dict[str, bool]:
    """Whether litellm can route each model: a provider prefix it knows, or a name it prices."""
    known: dict[str, bool] = {}
    for model in models:
        prefix, _name = registry.split_model(model)
        if prefix is None:
            known[model] = model in bundled_price_map()
        else:
            known[model] = prefix in registry.LITELLM_PREFIXES or prefix in _litellm_providers()
    return known


@cache
def _litellm_providers() -> frozenset[str]:
    return frozenset(str(getattr(p, "value", p)) for p in load_litellm().provider_list)


async def _ask_server(
    api_base: str, ollama: bool, api_key: str | None, timeout_s: float
) -> Listing | PreflightProblem:
    """The models the server lists, a problem when it does not answer or refuses the key, or None
    when it answers without a list (a server need not serve one)."""
    try:
        if ollama:
            return await asyncio.to_thread(catalog.discover_ollama, api_base, timeout_s)
        return await asyncio.to_thread(
            catalog.discover_openai_compatible, api_base, api_key, timeout_s
        )
    except catalog.ServerUnreachable as error:
        return EndpointUnreachable("api_base", str(error))
    except catalog.DiscoveryError as error:
        if error.status == 404 and not ollama and base_url.lacks_v1(api_base):
            return await _v1_problem(api_base, api_key, timeout_s)
        if error.status not in AUTH_STATUS:
            return None
        local = registry.provider(registry.LOCAL)
        return PreflightProblem(
            "api_key",
            f"the server at {address_of(api_base)} refused the API key (HTTP {error.status}): "
            f"set {local.env_var} to the server's key",
        )


async def _v1_problem(
    api_base: str, api_key: str | None, timeout_s: float
) -> PreflightProblem | None:
    """A base URL without `/v1` whose server lists its models under `/v1`: the fix named."""
    fixed = base_url.with_v1(api_base)
    try:
        await asyncio.to_thread(catalog.discover_openai_compatible, fixed, api_key, timeout_s)
    except catalog.DiscoveryError:
        return None
    return PreflightProblem(
        "api_base",
        f"api_base {api_base} answers HTTP 404 for its model list, and {fixed} lists models: "
        f"write it as {fixed}",
    )


def _model_problem(
    setting: str, model: str, known: bool, listing: Listing, api_base: str
) -> PreflightProblem | None:
    if listing is not None:
        return _listing_problem(setting, model, known, listing, api_base)
    if known:
        return None
    quoted = _quoted(model)
    prefix, name = registry.split_model(model)
    if prefix is None:
        fix = f"add its provider, e.g. openai/{name} or ollama_chat/{name}"
        return PreflightProblem(setting, f"{setting} {quoted} is not a model litellm knows: {fix}")
    fix = f"write provider/model, e.g. {DEFAULT_MODEL}"
    return PreflightProblem(
        setting, f"{setting} {quoted} does not start with a provider litellm knows: {fix}"
    )


def _listing_problem(
    setting: str, model: str, known: bool, listing: list[str], api_base: str
) -> PreflightProblem | None:
    """A model the server at `api_base` does not list, or lists under a name litellm can route."""
    served = _listed_as(model, listing)
    if served is not None:
        fix = f"write it as {served}"
        needs_prefix = f"{setting} {_quoted(model)} needs a provider prefix: {fix}"
        return None if known else PreflightProblem(setting, needs_prefix)
    if not listing:
        fix = "which lists no models: load or pull one on the server first"
        return PreflightProblem(
            setting, f"{setting} {_quoted(model)} is not served at {api_base}, {fix}"
        )
    more = f" and {len(listing) - SHOWN_MODELS} more" if len(listing) > SHOWN_MODELS else ""
    fix = f"pick one it lists: {', '.join(listing[:SHOWN_MODELS])}{more}"
    return PreflightProblem(
        setting, f"{setting} {_quoted(model)} is not served at {api_base}; {fix}"
    )


def _listed_as(model: str, listing: Sequence[str]) -> str | None:
    """The listed name `model` stands for, with or without its prefix; a name without a tag is the
    same model as `name:latest` (Ollama's default tag)."""
    _prefix, rest = registry.split_model(model)
    wanted = {_untagged(model), _untagged(rest)}
    for listed in listing:
        if _untagged(registry.split_model(listed)[1]) in wanted:
            return listed
    return None


def _untagged(name: str) -> str:
    return name.removesuffix(":latest")


def _key_problems(config: RunConfig, credentials: Credentials) -> list[PreflightProblem]:
    """A key where the run's provider needs one; and no sub-model that would be sent another
    provider's key (a run carries one key, for its root model's provider)."""
    root = registry.provider(registry.provider_for_run(config.model, config.api_base))
    if root.needs_key and not credentials.api_key:
        fix = f"set {root.env_var}" if root.env_var else "give its key"
        return [PreflightProblem("api_key", f"{root.label} needs an API key: {fix}")]
    if config.api_base or not config.sub_model or not credentials.api_key:
        return []
    sub = registry.provider(registry.provider_for_model(config.sub_model))
    if sub.name == root.name or not sub.needs_key:
        return []
    return [
        PreflightProblem(
            "sub_model",
            f"sub_model {_quoted(config.sub_model)} is served by {sub.label}, but a run sends "
            f"one key, {root.label}'s: pick a sub_model that {root.label} serves",
        )
    ]
