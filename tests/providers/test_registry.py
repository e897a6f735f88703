"""The one model-to-provider map: how a model string splits, and which prefixes are litellm's."""

from __future__ import annotations

import pytest

from rlm_desktop.engine.litellm_loader import load_litellm
from rlm_desktop.providers import registry


def test_the_prefixes_known_without_litellm_are_litellms_own() -> None:
    """Pre-flight trusts these without importing litellm; litellm's own list must agree."""
    listed = {str(getattr(p, "value", p)) for p in load_litellm().provider_list}
    assert registry.LITELLM_PREFIXES.issubset(listed)
    assert {"openai", "anthropic", "ollama_chat"} <= registry.LITELLM_PREFIXES
    assert registry.LOCAL not in registry.LITELLM_PREFIXES


@pytest.mark.parametrize(
    ("model", "split"),
    [
        ("openai/gpt-5", ("openai", "gpt-5")),
        (" OpenRouter/anthropic/claude ", ("openrouter", "anthropic/claude")),
        ("gpt-5-mini", (None, "gpt-5-mini")),
    ],
)
def test_a_model_splits_at_its_first_slash(model: str, split: tuple[str | None, str]) -> None:
    assert registry.split_model(model) == split


@pytest.mark.parametrize(
    ("model", "api_base", "provider"),
    [
        ("ollama_chat/llama3", None, "ollama"),
        ("claude-sonnet-4-5", None, "anthropic"),
        ("anthropic/claude-sonnet-4-5", "http://127.0.0.1:8000/v1", registry.LOCAL),
    ],
)
def test_the_provider_of_a_run(model: str, api_base: str | None, provider: str) -> None:
    assert registry.provider_for_run(model, api_base) == provider
