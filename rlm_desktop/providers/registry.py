"""Which provider serves a model, and where its key lives: the one model-to-provider map.

Keys, exports and the GUI all ask here; nothing else parses a litellm model string for its provider.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Provider:
    """A model provider as litellm names it, with the environment variable its key lives in."""

    name: str
    label: str
    env_var: str | None
    needs_key: bool = True
    base_url: str | None = None


LOCAL = "local"
"""Our name for the server at a run's base URL: a provider of ours, not one of litellm's."""

PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("openai", "OpenAI", "OPENAI_API_KEY"),
        Provider("anthropic", "Anthropic", "ANTHROPIC_API_KEY"),
        Provider("gemini", "Google Gemini", "GEMINI_API_KEY"),
        Provider("openrouter", "OpenRouter", "OPENROUTER_API_KEY"),
        Provider("ollama", "Ollama", None, needs_key=False, base_url="http://localhost:11434"),
        Provider(
            LOCAL,
            "OpenAI-compatible local server",
            "LOCAL_LLM_API_KEY",
            needs_key=False,
            base_url="http://127.0.0.1:8000/v1",
        ),
    )
}

_PREFIX_ALIASES = {
    "ollama_chat": "ollama",
    "vertex_ai": "gemini",
    "text-completion-openai": "openai",
}
_BARE_NAME_PREFIXES = (
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("chatgpt", "openai"),
    ("claude", "anthropic"),
    ("gemini", "gemini"),
)


LITELLM_PREFIXES = frozenset({*PROVIDERS, *_PREFIX_ALIASES} - {LOCAL})
"""Model prefixes known to be litellm providers without importing litellm (which takes seconds)."""


def split_model(model: str) -> tuple[str | None, str]:
    """(prefix, rest) of a model string: `openai/gpt-5` -> ("openai", "gpt-5"), `gpt-5` -> (None,
    "gpt-5"). The prefix is whatever precedes the first "/", provider or not."""
    model = model.strip()
    if "/" not in model:
        return None, model
    prefix, rest = model.split("/", 1)
    return prefix.lower(), rest


def provider(name: str) -> Provider:
    """The provider called `name`; an unknown litellm provider gets `NAME_API_KEY`."""
    known = PROVIDERS.get(name)
    if known is not None:
        return known
    return Provider(name, name, f"{name.upper().replace('-', '_')}_API_KEY")


def provider_for_model(model: str) -> str:
    """The provider that serves a litellm model string, e.g. `anthropic/claude-x` -> `anthropic`."""
    prefix, name = split_model(model)
    if prefix is not None:
        return _PREFIX_ALIASES.get(prefix, prefix)
    lowered = name.lower()
    for start, served_by in _BARE_NAME_PREFIXES:
        if lowered.startswith(start):
            return served_by
    return "openai"


def provider_for_run(model: str, api_base: str | None) -> str:
    """The provider whose key a run sends: the local server's whenever a base URL is given, so a
    hosted provider's key never goes to a server it does not belong to."""
    return LOCAL if api_base else provider_for_model(model)
