"""A run's HTTP connections: one pool per run, its key only to its own endpoint, closed at the end.

Requests to an `openai/` model go through litellm's provider config and HTTP handler resolved once
per run (`engine/openai_route.py`); these tests check from outside what that must not change.
"""

from __future__ import annotations

import asyncio
import time

import psutil
import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Credentials, Run, RunConfig
from rlm_desktop.engine.config import PLACEHOLDER_API_KEY
from rlm_desktop.engine.events import LLMResponded
from tests.engine.scripting import (
    DOCUMENT,
    QUERY,
    UNKNOWN_HOST_URL,
    make_run,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import Reply, ScriptedServer

FAN_OUT = 8
SCRIPT = [
    repl(f"r = llm_query_batched(['q %d' % i for i in range({FAN_OUT})])"),
    repl("FINAL(str(len(r)))"),
]


def _keys_seen(server: ScriptedServer) -> set[str]:
    return {
        value for headers in server.headers for name, value in headers.items()
        if name.lower() == "authorization"
    }  # fmt: skip


def _open_connections_to(server: ScriptedServer) -> list[object]:
    port = int(server.root_url.rsplit(":", 1)[1])
    return [
        c
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    ]


async def test_two_runs_at_once_each_send_their_own_key_to_their_own_endpoint() -> None:
    first, second = ScriptedServer().start(), ScriptedServer().start()
    try:
        for server in (first, second):
            server.respond_with(scripted(root=SCRIPT, sub="7"))
        results = await asyncio.gather(
            run_to_end(make_run(first, credentials=Credentials(api_key="key-one"))),
            run_to_end(make_run(second, credentials=Credentials(api_key="key-two"))),
        )
        assert [result.answer for result, _events in results] == [str(FAN_OUT)] * 2
        assert len(first.headers) == len(second.headers) == FAN_OUT + 2
        assert _keys_seen(first) == {"Bearer key-one"}
        assert _keys_seen(second) == {"Bearer key-two"}

        # A later run without a key, to the first endpoint, does not inherit the first run's.
        first.headers.clear()
        result, _events = await run_to_end(make_run(first))
        assert result.answer == str(FAN_OUT)
        assert _keys_seen(first) == {f"Bearer {PLACEHOLDER_API_KEY}"}
    finally:
        first.stop()
        second.stop()


async def test_a_run_closes_its_connections_when_it_ends(scripted_server: ScriptedServer) -> None:
    scripted_server.respond_with(scripted(root=SCRIPT, sub="7"))
    scripted_server.latency_s = 0.2  # the fan-out's requests are in flight together
    result, _events = await run_to_end(make_run(scripted_server))
    assert result.answer == str(FAN_OUT)
    assert scripted_server.max_in_flight > 1
    assert await _closing(scripted_server) == []


async def _closing(server: ScriptedServer) -> list[object]:
    """The connections to `server` still open after a grace period (transports close on the
    loop's next turns)."""

    deadline = time.monotonic() + 5
    still_open = _open_connections_to(server)
    while still_open and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        still_open = _open_connections_to(server)
    return still_open


def _run_of(server: ScriptedServer, model: str) -> Run:
    config = RunConfig(query=QUERY, model=model, api_base=server.base_url, mode="rlm")
    return Run(config, [DOCUMENT], folders=paths.engine_folders())


@pytest.mark.parametrize(
    ("model", "transport"),
    [
        ("openai/test-model", "aiohttp"),
        ("openai/test-model", "httpx"),
        ("hosted_vllm/test-model", "aiohttp"),
    ],
)
async def test_the_lean_route_and_acompletion_answer_and_fail_alike(
    scripted_server: ScriptedServer, model: str, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`openai/` takes the lean route (on litellm's aiohttp session, or through its handler when
    litellm is told to use httpx's own transport), `hosted_vllm/` (an OpenAI-compatible server
    litellm configures its own way) `litellm.acompletion`: the same replies and errors read the
    same."""
    monkeypatch.setenv("DISABLE_AIOHTTP_TRANSPORT", str(transport == "httpx"))
    scripted_server.respond_with(scripted(root=SCRIPT, sub="7"))
    result, events = await run_to_end(_run_of(scripted_server, model))
    assert result.answer == str(FAN_OUT)
    responded = of_type(events, LLMResponded)
    assert [(r.content, r.finish_reason) for r in responded[1:-1]] == [("7", "stop")] * FAN_OUT
    assert all(r.input_tokens > 0 and r.output_tokens > 0 for r in responded)

    scripted_server.respond_with(lambda request: Reply(status=401, content="Incorrect API key"))
    result, _events = await run_to_end(_run_of(scripted_server, model))
    assert (result.status, result.error) == (
        "error",
        "HTTP 401: Incorrect API key — check the API key",
    )


async def test_a_runs_requests_one_after_another_share_one_connection(
    scripted_server: ScriptedServer,
) -> None:
    """Root turns and sub-calls go over the run's one pool: sequential requests reuse a
    connection rather than opening one each."""
    turns = [repl(f"a{i} = llm_query('part {i}')") for i in range(4)] + [repl("FINAL('done')")]
    scripted_server.respond_with(scripted(root=turns, sub="7"))
    result, _events = await run_to_end(make_run(scripted_server))
    assert (result.status, result.answer) == ("completed", "done")
    assert len(scripted_server.peers) == 9  # five root turns, four sub-calls
    assert len(set(scripted_server.peers)) == 1


async def test_a_request_past_its_timeout_is_retried_then_ends_the_run_saying_so(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(scripted(root=SCRIPT, sub="7"))
    scripted_server.latency_s = 1.0
    run = make_run(scripted_server, request_timeout_s=0.2, max_retries=1)
    result, _events = await run_to_end(run)
    assert len(scripted_server.requests) == 2  # the first try and one retry
    assert result.status == "error"
    assert result.error == "Timeout: the provider sent no reply within 0.2 s"


@pytest.mark.parametrize("model", ["openai/test-model", "hosted_vllm/test-model"])
async def test_requests_go_through_the_proxy_the_environment_names(
    scripted_server: ScriptedServer, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine behind an HTTP proxy: the provider's host resolves only there (the scripted
    server stands in for the proxy, which forwards `POST http://host/...` to itself)."""
    monkeypatch.setenv("HTTP_PROXY", scripted_server.root_url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    scripted_server.respond_with(scripted(root=SCRIPT, sub="7"))
    config = RunConfig(query=QUERY, model=model, api_base=UNKNOWN_HOST_URL, mode="rlm")
    run = Run(config, [DOCUMENT], folders=paths.engine_folders())
    result, _events = await run_to_end(run)
    assert (result.status, result.answer) == ("completed", str(FAN_OUT))
    assert len(scripted_server.requests) == FAN_OUT + 2
