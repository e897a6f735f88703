"""Provider errors: 429 and 5xx are retried, a 400 or a server that cannot be reached is not, error
bodies read as their message, and sub-call failures reach the REPL."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Run, RunConfig
from rlm_desktop.engine.events import CallFinished, CallStarted, LLMResponded, LLMRetried
from tests.engine.scripting import (
    DOCUMENT,
    QUERY,
    TEST_MODEL,
    UNKNOWN_HOST_URL,
    closed_port_url,
    make_run,
    observation_after,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import NO_SYSTEM_ROLE, ROLES_MUST_ALTERNATE, Reply, ScriptedServer

NO_WAIT = {"Retry-After": "0"}


async def test_server_errors_and_rate_limits_are_retried(scripted_server: ScriptedServer) -> None:
    scripted_server.enqueue(
        Reply(status=500, content="internal hiccup"),
        Reply(status=429, content="slow down", headers=NO_WAIT),
        repl("FINAL('ok')"),
    )
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer) == ("completed", "ok")
    assert len(scripted_server.chat_requests()) == 3
    first, second = of_type(events, LLMRetried)
    assert (first.attempt, second.attempt) == (1, 2)
    assert "HTTP 500" in first.reason
    assert "HTTP 429" in second.reason
    assert 0 < first.delay_s <= 0.5
    assert second.delay_s == 0
    (responded,) = of_type(events, LLMResponded)
    assert (responded.attempts, responded.error) == (3, None)
    assert {first.request_id, second.request_id} == {responded.request_id}


async def test_a_bad_request_is_not_retried(scripted_server: ScriptedServer) -> None:
    scripted_server.enqueue(Reply(status=400, content="prompt is too long"))
    result, events = await run_to_end(make_run(scripted_server))

    assert len(scripted_server.chat_requests()) == 1
    assert not of_type(events, LLMRetried)
    assert result.status == "error"
    assert "HTTP 400" in (result.error or "")
    assert "prompt is too long" in (result.error or "")
    (responded,) = of_type(events, LLMResponded)
    assert responded.attempts == 1
    assert responded.error
    assert responded.cost_usd is None, "a failed request to an unpriced model has no known cost"
    assert result.unpriced, "the run counts it as a call to an unpriced model, as the tree does"
    assert of_type(events, CallFinished)[0].status == "error"


JINJA_EXCEPTION = (
    "\n------------\nWhile executing CallExpression at line 21, column 19 in source:\n"
    "...%}\n    {{- raise_exception('No user query found in messages.') }}\n"
    "                   ^\nError: Jinja Exception: No user query found in messages."
)
"""llama.cpp's server with its newer template engine, where Qwen 3's template refuses (HTTP 500)."""


@pytest.mark.parametrize(
    "refusal",
    [ROLES_MUST_ALTERNATE, JINJA_EXCEPTION, NO_SYSTEM_ROLE],
    ids=["minja", "jinja", "system"],
)
async def test_a_chat_templates_refusal_is_sent_once_and_an_overload_still_retried(
    scripted_server: ScriptedServer, refusal: str
) -> None:
    scripted_server.enqueue(
        Reply(status=503, content="Loading model", headers=NO_WAIT),
        Reply(status=500, content=refusal),
    )
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('too late')")]}))
    result, events = await run_to_end(make_run(scripted_server))

    assert len(scripted_server.chat_requests()) == 2
    (retried,) = of_type(events, LLMRetried)
    assert "HTTP 503: Loading model" in retried.reason
    assert result.status == "error"
    assert (result.error or "").startswith("HTTP 500: ")
    assert " ".join(refusal.split())[:40] in (result.error or "")


async def test_retries_give_up_after_max_retries(scripted_server: ScriptedServer) -> None:
    scripted_server.enqueue(*[Reply(status=503, content="overloaded", headers=NO_WAIT)] * 3)
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('too late')")]}))
    result, events = await run_to_end(make_run(scripted_server, max_retries=2))

    assert len(scripted_server.chat_requests()) == 3
    assert [e.attempt for e in of_type(events, LLMRetried)] == [1, 2]
    assert result.status == "error"
    assert "HTTP 503" in (result.error or "")


async def test_a_failed_sub_call_is_an_llm_call_error_in_the_repl(
    scripted_server: ScriptedServer,
) -> None:
    code = (
        "try:\n"
        "    llm_query('summarise')\n"
        "except LLMCallError as error:\n"
        "    print('caught', type(error).__name__, error)"
    )
    bad = Reply(status=400, content="the sub prompt is malformed")
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}, sub=bad))
    result, events = await run_to_end(make_run(scripted_server))

    shown = observation_after(scripted_server, 0)
    assert "caught LLMCallError" in shown
    assert "malformed" in shown
    sub = next(e for e in of_type(events, CallStarted) if e.kind == "llm")
    assert {e.call_id: e.status for e in of_type(events, CallFinished)}[sub.call_id] == "error"
    assert result.status == "completed"


async def test_a_reply_cut_at_the_length_limit_is_reported(scripted_server: ScriptedServer) -> None:
    scripted_server.enqueue(
        Reply(content=repl("print('half')"), finish_reason="length"), repl("FINAL('ok')")
    )
    result, events = await run_to_end(make_run(scripted_server))

    assert "cut at the output-token limit" in observation_after(scripted_server, 0)
    assert [e.truncated for e in of_type(events, LLMResponded)] == [True, False]
    assert result.status == "completed"


@pytest.mark.parametrize(
    ("make_url", "address"),
    [(closed_port_url, None), (lambda: UNKNOWN_HOST_URL, "nonexistent.invalid:80")],
    ids=["refused", "unknown-host"],
)
async def test_a_server_that_cannot_be_reached_fails_at_once_and_says_so(
    make_url: Callable[[], str], address: str | None
) -> None:
    """litellm calls these "HTTP 500"; no server said so, and trying again would not help."""
    url = make_url()
    address = address or url.removeprefix("http://").removesuffix("/v1")
    config = RunConfig(query=QUERY, model=TEST_MODEL, api_base=url, mode="rlm")
    run = Run(config, [DOCUMENT], folders=paths.engine_folders())
    result, events = await run_to_end(run)

    assert result.status == "error"
    assert result.error == f"cannot connect to {address} — is the server running?"
    assert result.http_status is None
    assert not of_type(events, LLMRetried)
    (responded,) = of_type(events, LLMResponded)
    assert responded.attempts == 1


async def test_a_json_error_body_reads_as_its_message(scripted_server: ScriptedServer) -> None:
    scripted_server.enqueue(Reply(status=404, content="model 'gpt-9' not found, try pulling it"))
    result, _events = await run_to_end(make_run(scripted_server))

    assert result.status == "error"
    assert result.error == "HTTP 404: model 'gpt-9' not found, try pulling it"


async def test_rate_limits_and_overload_are_retried_and_read_as_their_message(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.enqueue(
        Reply(status=429, content="slow down", headers=NO_WAIT),
        Reply(status=503, content="overloaded", headers=NO_WAIT),
        repl("FINAL('ok')"),
    )
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer) == ("completed", "ok")
    assert [e.reason for e in of_type(events, LLMRetried)] == [
        "HTTP 429: slow down",
        "HTTP 503: overloaded",
    ]


async def test_a_web_page_at_the_api_base_is_one_clear_error_not_retried(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.enqueue(Reply(page="<html><body>Welcome to nginx!</body></html>"))
    result, events = await run_to_end(make_run(scripted_server, max_retries=3))

    assert result.status == "error"
    assert result.http_status is None  # the server said 200; no status to blame
    assert result.error == (
        "the server answered with a web page ('Welcome to nginx!'), not the chat API: "
        "check the API base (an OpenAI-compatible server's usually ends in /v1)"
    )
    assert len(scripted_server.requests) == 1
    assert not of_type(events, LLMRetried)


async def test_an_error_page_reads_as_what_it_says_not_as_its_markup(
    scripted_server: ScriptedServer,
) -> None:
    page = (
        "<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>h1 {color: red}"
        "</style></head><body><h1>502 Bad Gateway</h1><p>nginx/1.24 &amp; friends</p>"
        "<script>track()</script></body></html>"
    )
    scripted_server.enqueue(Reply(status=502, page=page))
    result, _events = await run_to_end(make_run(scripted_server, max_retries=0))

    assert result.status == "error"
    assert result.error == (
        "HTTP 502: the server answered with a web page ('502 Bad Gateway — nginx/1.24 & friends'),"
        " not the chat API: check the API base (an OpenAI-compatible server's usually ends in /v1)"
    )


async def test_a_dropped_connection_is_retried_and_reads_as_one(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.enqueue(Reply(hang_up=True), Reply(hang_up=True), repl("FINAL('ok')"))
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer) == ("completed", "ok")
    reasons = [e.reason for e in of_type(events, LLMRetried)]
    assert reasons == ["Connection error: Server disconnected"] * 2
