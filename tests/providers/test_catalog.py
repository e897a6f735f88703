"""Asking a server for its models: a server that does not answer is told apart from other errors."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rlm_desktop.providers.catalog import (
    DiscoveryError,
    ServerBusy,
    ServerUnreachable,
    discover_ollama,
    discover_openai_compatible,
)
from tests.engine.scripting import UNKNOWN_HOST_URL, closed_port_url
from tests.scripted_server import Garbage, ScriptedServer


@pytest.mark.parametrize(
    ("make_url", "address"),
    [(closed_port_url, None), (lambda: UNKNOWN_HOST_URL, "nonexistent.invalid:80")],
    ids=["refused", "unknown-host"],
)
def test_a_server_that_cannot_be_reached_says_so(
    make_url: Callable[[], str], address: str | None
) -> None:
    url = make_url()
    address = address or url.removeprefix("http://").removesuffix("/v1")
    with pytest.raises(ServerUnreachable) as caught:
        discover_openai_compatible(url, timeout_s=2)
    assert str(caught.value) == f"cannot connect to {address} — is the server running?"


def test_a_refused_key_keeps_its_status() -> None:
    server = ScriptedServer(listing_key="sk-server").start()
    try:
        assert discover_openai_compatible(server.base_url, "sk-server") == ["openai/test-model"]
        with pytest.raises(DiscoveryError) as caught:
            discover_openai_compatible(server.base_url, "sk-wrong")
        assert not isinstance(caught.value, ServerUnreachable)
        assert caught.value.status == 401
    finally:
        server.stop()


def test_ollama_tags_are_listed(scripted_server: ScriptedServer) -> None:
    scripted_server.models = ("llama3.1:8b",)
    assert discover_ollama(scripted_server.root_url) == ["ollama_chat/llama3.1:8b"]


@pytest.mark.parametrize("url", ["localhost:8000", "file:///etc", "http://[::1"])
def test_a_base_url_that_is_not_a_web_address_is_one_clear_error(url: str) -> None:
    with pytest.raises(DiscoveryError, match="not a web address") as caught:
        discover_openai_compatible(url)
    assert not isinstance(caught.value, ServerUnreachable)


def test_a_busy_server_is_told_from_one_that_is_down(scripted_server: ScriptedServer) -> None:
    """It took the connection and said nothing (llama-cpp-python while it generates): busy."""
    scripted_server.busy = True
    address = scripted_server.root_url.removeprefix("http://")
    with pytest.raises(ServerBusy) as caught:
        discover_openai_compatible(scripted_server.base_url, timeout_s=0.5)
    assert str(caught.value) == (
        f"the server at {address} accepted the connection but has not answered in 0.5 s: it is "
        "probably still generating (a previous run's reply?) — wait, or restart it"
    )
    with pytest.raises(ServerBusy):
        discover_ollama(scripted_server.root_url, timeout_s=0.5)


def test_a_huge_listing_is_not_read_whole(scripted_server: ScriptedServer) -> None:
    size = 256 * 1024 * 1024
    scripted_server.routes["/v1/models"] = Garbage(size)
    with pytest.raises(DiscoveryError, match="answered with more than 2,000,000 bytes") as caught:
        discover_openai_compatible(scripted_server.base_url)
    assert not isinstance(caught.value, ServerUnreachable)
    assert scripted_server.sent["/v1/models"] < size // 4
