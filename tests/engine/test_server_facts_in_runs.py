"""A run against a local server: the window the server gives is the one the run measures by, a
base URL without its /v1 is told how to mend, and a stop says the server may still be writing."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from rlm_desktop.engine import ConfigError, ContextDocument
from rlm_desktop.engine.events import ModeChosen
from tests.engine.scripting import QUERY, make_run, of_type, repl, run_to_end, scripted
from tests.scripted_server import ScriptedServer, system_text

SERVER_WINDOW = 32_768
LLAMA_CPP_PROPS = {"default_generation_settings": {"n_ctx": SERVER_WINDOW}}
LONG = ContextDocument(name="long.txt", text="word " * 28_000)
"""About 32,000 tokens: inside the 128,000-token window assumed for an unknown model, not inside
the server's 32,768 with room for the reply."""


async def test_a_direct_call_too_large_for_the_server_s_window_is_refused_up_front(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.routes["/props"] = LLAMA_CPP_PROPS
    run = make_run(scripted_server, mode="direct", documents=[LONG])
    with pytest.raises(ConfigError) as caught:
        await run.execute()
    assert "do not fit openai/test-model's window (32,768 tokens, as its server's llama.cpp" in (
        str(caught.value)
    )
    assert scripted_server.chat_requests() == []


async def test_auto_orchestrates_what_the_server_s_window_cannot_take_directly(
    scripted_server: ScriptedServer,
) -> None:
    """Even with a direct-call threshold above the input, the server's window decides."""
    scripted_server.routes["/props"] = LLAMA_CPP_PROPS
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL(len(context))")]}))
    run = make_run(
        scripted_server,
        mode="auto",
        documents=[LONG],
        auto_direct_max_tokens=100_000,
        profile="default",
    )
    result, events = await run_to_end(run)

    (chosen,) = of_type(events, ModeChosen)
    assert chosen.mode == "rlm"
    assert "does not fit openai/test-model's window (32,768 tokens" in chosen.reason
    assert (result.status, result.answer) == ("completed", str(len(LONG.text)))
    assert "about 32,768 tokens" in system_text(scripted_server.chat_requests()[0])


async def test_a_404_from_a_base_url_without_v1_says_to_add_it(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.v1_only = True
    root = scripted_server.root_url
    run = make_run(scripted_server, mode="direct", api_base=root)
    result, _events = await run_to_end(run)

    assert (result.status, result.http_status) == ("error", 404)
    assert result.error is not None
    assert result.error.startswith("HTTP 404")
    assert result.error.endswith(f"— the API base {root} has no /v1: try {root}/v1")


async def test_a_run_stopped_while_the_server_writes_says_it_may_still_be_generating(
    scripted_server: ScriptedServer,
) -> None:
    asked, released = threading.Event(), threading.Event()

    def slow(_request: dict[str, Any]) -> str:
        asked.set()
        released.wait(30)
        return "too late"

    scripted_server.respond_with(slow)
    run = make_run(scripted_server)
    task = asyncio.ensure_future(run.execute())
    try:
        assert await asyncio.to_thread(asked.wait, 30)
        run.cancel()
        result = await task
    finally:
        released.set()
    address = scripted_server.root_url.removeprefix("http://")
    assert result.status == "cancelled"
    assert result.error is not None
    assert f"the server at {address} may still be generating the reply" in result.error
