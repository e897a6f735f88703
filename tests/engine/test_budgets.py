"""Budgets: the turn cap, and token, cost and sub-call caps that 100+ concurrent calls never pass."""

from __future__ import annotations

from collections.abc import Sequence

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import (
    AnswerSubmitted,
    BudgetExceeded,
    BudgetUpdated,
    Event,
    LLMRequestSent,
    LLMResponded,
    TurnExecuted,
)
from tests.engine.scripting import (
    QUERY,
    TEST_MODEL,
    is_sub_call,
    make_run,
    of_type,
    repl,
    rlm_requests,
    run_to_end,
    scripted,
)
from tests.scripted_server import Reply, ScriptedServer, last_user_text

FAN_OUT = 120
PARTIAL = f"partial: {FAN_OUT} items dispatched"
FAN_OUT_CELL = repl(
    f"answer['content'] = {PARTIAL!r}\n"
    "try:\n"
    f"    replies = llm_query_batched([f'item {{i}}' for i in range({FAN_OUT})])\n"
    "    print('all', len(replies))\n"
    "except BudgetExceededError as error:\n"
    "    print('refused', type(error).__name__, error)"
)
ROOT = [FAN_OUT_CELL, repl("FINAL('done')")]
PRICES = {TEST_MODEL: (1e-6, 2e-6)}


def heavy_sub_reply(prompt: str) -> Reply:
    """A sub-call that really uses most of what it reserved."""
    return Reply(content=f"answer to {prompt}", completion_tokens=4_000)


def sub_requests(server: ScriptedServer) -> int:
    return sum(1 for request in server.chat_requests() if is_sub_call(request))


def peak_tokens(events: Sequence[Event]) -> int:
    """The most tokens ever spent plus held by calls in flight, replayed from the events."""
    held: dict[str, int] = {}
    spent = peak = 0
    for event in events:
        if isinstance(event, LLMRequestSent):
            held[event.request_id] = event.reserved_tokens
        elif isinstance(event, LLMResponded):
            held.pop(event.request_id, None)
            spent += event.input_tokens + event.output_tokens
        peak = max(peak, spent + sum(held.values()))
    return peak


async def test_the_turn_cap_ends_with_one_answer_now_request(
    scripted_server: ScriptedServer,
) -> None:
    turns = [repl("print('still working')")] * 3 + ["FINAL(best guess so far)"]
    scripted_server.respond_with(scripted({QUERY: turns}))
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(max_turns=3)))

    requests = rlm_requests(scripted_server)
    assert len(requests) == 4
    assert "You have used all 3 turns" in last_user_text(requests[-1])
    assert (result.status, result.answer, result.turns) == ("max_turns", "best guess so far", 3)
    assert "3 turns" in (result.error or "")
    assert of_type(events, AnswerSubmitted)[0].source == "partial"


async def test_the_turn_cap_keeps_the_draft_answer(scripted_server: ScriptedServer) -> None:
    turns = [repl("answer['content'] = 'draft so far'"), repl("print(1)"), ""]
    scripted_server.respond_with(scripted({QUERY: turns}))
    result, _ = await run_to_end(make_run(scripted_server, budget=Budget(max_turns=2)))

    assert (result.status, result.answer) == ("max_turns", "draft so far")


async def test_the_sub_call_cap_holds_under_fan_out(scripted_server: ScriptedServer) -> None:
    scripted_server.respond_with(scripted({QUERY: ROOT}))
    run = make_run(scripted_server, budget=Budget(max_sub_calls=40, concurrency=32))
    result, events = await run_to_end(run)

    refused = FAN_OUT - 40
    assert (result.status, result.answer, result.sub_calls) == ("budget_exceeded", "done", 40)
    assert result.refused_calls == refused
    assert result.error == f"answered after the budget ran out ({refused} calls refused)"
    assert sub_requests(scripted_server) == 40
    shown = of_type(events, TurnExecuted)[0].observation
    assert "refused BudgetExceededError" in shown
    assert any(e.limit == "max_sub_calls" for e in of_type(events, BudgetExceeded))


async def test_the_token_cap_holds_under_fan_out(scripted_server: ScriptedServer) -> None:
    cap = 60_000
    scripted_server.respond_with(scripted({QUERY: ROOT}, sub=heavy_sub_reply))
    run = make_run(scripted_server, budget=Budget(max_tokens=cap, concurrency=32))
    result, events = await run_to_end(run)

    sent = sub_requests(scripted_server)
    assert 0 < sent < FAN_OUT
    assert result.input_tokens + result.output_tokens <= cap
    assert peak_tokens(events) <= cap
    assert "refused BudgetExceededError" in of_type(events, TurnExecuted)[0].observation
    assert (result.status, result.answer) == ("budget_exceeded", PARTIAL)
    assert "token budget" in (result.error or "")
    assert of_type(events, BudgetExceeded)[-1].limit == "max_tokens"


async def test_the_cost_cap_holds_under_fan_out(scripted_server: ScriptedServer) -> None:
    cap = 0.15
    scripted_server.respond_with(scripted({QUERY: ROOT}, sub=heavy_sub_reply))
    run = make_run(scripted_server, prices=PRICES, budget=Budget(max_cost_usd=cap, concurrency=32))
    result, events = await run_to_end(run)

    assert 0 < sub_requests(scripted_server) < FAN_OUT
    assert not result.unpriced
    assert 0 < result.cost_usd <= cap
    assert all(e.cost_usd <= cap for e in of_type(events, BudgetUpdated))
    assert "refused BudgetExceededError" in of_type(events, TurnExecuted)[0].observation
    assert (result.status, result.answer) == ("budget_exceeded", PARTIAL)
    assert of_type(events, BudgetExceeded)[-1].limit == "max_cost_usd"


async def test_a_root_refused_at_once_sends_nothing(scripted_server: ScriptedServer) -> None:
    scripted_server.respond_with(scripted({QUERY: ROOT}))
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(max_tokens=100)))

    assert scripted_server.chat_requests() == []
    assert (result.status, result.input_tokens, result.turns) == ("budget_exceeded", 0, 1)
    assert [e.limit for e in of_type(events, BudgetExceeded)] == ["max_tokens"]


async def test_a_refused_batch_keeps_the_answers_that_arrived(
    scripted_server: ScriptedServer,
) -> None:
    code = (
        "try:\n"
        "    llm_query_batched([f'item {i}' for i in range(20)])\n"
        "except BudgetExceededError as error:\n"
        "    print('answered', sum(r is not None for r in error.results))"
    )
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    _, events = await run_to_end(make_run(scripted_server, budget=Budget(max_sub_calls=5)))

    assert "answered 5" in of_type(events, TurnExecuted)[0].observation
