"""Caps hold whatever the provider does: one that ignores `max_tokens`, reports usage it did not
produce, or none, is cut and counted at what each call held (issue: a $0.10 cap spent $2.40)."""

from __future__ import annotations

import pytest

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import BudgetUpdated, LLMResponded, TurnExecuted
from tests.engine.scripting import (
    QUERY,
    TEST_MODEL,
    is_sub_call,
    make_run,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import Reply, ScriptedServer

PRICES = {TEST_MODEL: (1e-6, 2e-6)}
FIRST = "a first, small question"
FAN_OUT = 64
CELL = repl(
    f"print('first:', llm_query({FIRST!r}))\n"
    "try:\n"
    f"    replies = llm_query_batched([f'part {{i}}' for i in range({FAN_OUT})])\n"
    "    print('all', len(replies), 'longest', max(len(r) for r in replies))\n"
    "except (BudgetExceededError, LLMCallError) as error:\n"
    "    kept = [r for r in (error.results or []) if isinstance(r, str)]\n"
    "    print('stopped', type(error).__name__, len(kept), max(map(len, kept), default=0))\n"
)
ROOT = [CELL, repl("FINAL('done')")]
WORDS = 100_000


def overrun(kind: str) -> Reply:
    """What a provider ignoring `max_tokens` sends to every call after the first."""
    if kind == "huge text":  # 100,000 tokens of text: more bytes than max_tokens can take
        return Reply(content="word " * WORDS)
    if kind == "inflated usage":  # a short reply that says it used 100,000 tokens
        return Reply(content="short", completion_tokens=WORDS)
    # 20,000 tokens, within the byte cap, and no usage reported at all
    return Reply(content="a " * 20_000, completion_tokens=0, prompt_tokens=0)


def responder(kind: str):  # type: ignore[no-untyped-def]
    def sub(prompt: str) -> Reply:
        return Reply(content="small answer") if prompt == FIRST else overrun(kind)

    return scripted({QUERY: ROOT}, sub=sub)


KINDS = ["huge text", "inflated usage", "text past max_tokens without usage"]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_dollar_cap_holds_against_a_provider_that_ignores_max_tokens(
    scripted_server: ScriptedServer, kind: str
) -> None:
    cap = 0.10
    scripted_server.respond_with(responder(kind))
    run = make_run(scripted_server, prices=PRICES, budget=Budget(max_cost_usd=cap, concurrency=64))
    result, events = await run_to_end(run)

    sent = sum(1 for r in scripted_server.chat_requests() if is_sub_call(r))
    assert sent > 1
    assert 0 < result.cost_usd <= cap + 1e-9, result.cost_usd
    assert all(e.cost_usd <= cap + 1e-9 for e in of_type(events, BudgetUpdated))
    assert result.status == "budget_exceeded"
    for reply in of_type(events, LLMResponded):
        assert reply.output_tokens <= 8192
        assert reply.output_tokens > 0 or not reply.content  # no reply is free


@pytest.mark.parametrize("kind", KINDS)
async def test_a_token_cap_holds_against_a_provider_that_ignores_max_tokens(
    scripted_server: ScriptedServer, kind: str
) -> None:
    cap = 300_000
    scripted_server.respond_with(responder(kind))
    result, events = await run_to_end(
        make_run(scripted_server, budget=Budget(max_tokens=cap, concurrency=64))
    )

    assert result.input_tokens + result.output_tokens <= cap
    assert all(e.tokens <= cap for e in of_type(events, BudgetUpdated))


async def test_text_past_max_tokens_is_cut_and_the_user_is_told(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(responder("text past max_tokens without usage"))
    result, events = await run_to_end(
        make_run(scripted_server, budget=Budget(max_tokens=300_000, concurrency=64))
    )

    cut = [e for e in of_type(events, LLMResponded) if e.stopped_early]
    assert cut
    assert all(e.truncated and e.output_tokens <= 1024 for e in cut)
    assert "past the max_tokens of 1,024" in (cut[0].stopped_early or "")
    assert all(len(e.content) < 2 * 1024 * 2 for e in cut)  # "a " is one token: about 8 KB kept
    shown = of_type(events, TurnExecuted)[0].observation
    assert "first: small answer" in shown


async def test_inflated_usage_is_counted_at_max_tokens_and_said(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(responder("inflated usage"))
    _, events = await run_to_end(
        make_run(scripted_server, budget=Budget(max_tokens=300_000, concurrency=64))
    )

    capped = [e for e in of_type(events, LLMResponded) if e.stopped_early]
    assert capped
    assert all(e.output_tokens == 1024 for e in capped)
    assert "reported 100,000 output tokens" in (capped[0].stopped_early or "")
