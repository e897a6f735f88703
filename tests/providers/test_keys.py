"""API keys go to the keyring (or memory for the session), never to a file."""

from __future__ import annotations

import pytest

from rlm_desktop.providers import keys, registry
from tests.memory_keyring import MemoryKeyring


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("openai/gpt-5-mini", "openai"),
        ("gpt-4o", "openai"),
        ("anthropic/claude-sonnet-4", "anthropic"),
        ("claude-3-5-haiku", "anthropic"),
        ("gemini/gemini-2.5-flash", "gemini"),
        ("openrouter/meta/llama", "openrouter"),
        ("ollama_chat/llama3", "ollama"),
        ("ollama/qwen", "ollama"),
        ("mistral/mistral-large", "mistral"),
    ],
)
def test_provider_for_model(model: str, provider: str) -> None:
    assert registry.provider_for_model(model) == provider


def test_key_round_trips_through_the_keyring(memory_keyring: MemoryKeyring) -> None:
    keys.set_key("openai", "  sk-test-123  ")
    assert memory_keyring.passwords == {("rlm-desktop", "openai"): "sk-test-123"}
    assert keys.get_key("openai") == "sk-test-123"
    assert keys.key_source("openai") == "keyring"
    keys.delete_key("openai")
    assert keys.get_key("openai") is None
    keys.delete_key("openai")


def test_environment_is_the_fallback(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    assert keys.get_key("anthropic") == "env-key"
    assert keys.key_source("anthropic") == "ANTHROPIC_API_KEY"
    keys.set_key("anthropic", "stored")
    assert keys.get_key("anthropic") == "stored"
    monkeypatch.setenv("MISTRAL_API_KEY", "m")
    assert keys.get_key("mistral") == "m"


def test_missing_keyring_refuses_and_offers_session_only(no_keyring: None) -> None:
    assert not keys.keyring_available()
    assert "no working keyring" in keys.backend_description()
    assert keys.get_key("openai") is None or keys.key_source("openai") == "OPENAI_API_KEY"
    with pytest.raises(keys.KeyringUnavailable, match="session only"):
        keys.set_key("openai", "sk-x")
    keys.set_key("openai", "sk-x", session_only=True)
    assert keys.get_key("openai") == "sk-x"
    assert keys.key_source("openai") == "session"


def test_backend_description_names_the_backend(memory_keyring: MemoryKeyring) -> None:
    assert keys.keyring_available()
    assert "MemoryKeyring" in keys.backend_description()


def test_empty_key_is_refused(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(ValueError, match="empty"):
        keys.set_key("openai", "   ")


def test_a_run_with_a_base_url_uses_the_local_servers_key() -> None:
    assert registry.provider_for_run("openai/gpt-5-mini", None) == "openai"
    assert registry.provider_for_run("openai/gpt-5-mini", "http://127.0.0.1:8000/v1") == "local"
    assert registry.provider_for_run("anthropic/claude-sonnet-4", "http://gateway/v1") == "local"
