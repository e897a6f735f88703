"""Caps are hard bounds: a provider that counts more than the app, a call cut off in flight and a
model without a price cannot take a run past its dollar or token cap."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ConfigError, Run, RunConfig
from rlm_desktop.engine.events import (
    BudgetExceeded,
    BudgetUpdated,
    LLMRequestSent,
    LLMResponded,
    TurnExecuted,
)
from tests.cli import run_cli
from tests.engine.scripting import (
    DOCUMENT,
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
INFLATION = 30
"""How many times more tokens the provider reports than its own (honest) count."""
FAN_OUT = 60
FAN_OUT_CELL = repl(
    "try:\n"
    f"    replies = llm_query_batched([f'item {{i}}: ' + context[:5000] for i in range({FAN_OUT})])\n"
    "    print('all', len(replies))\n"
    "except BudgetExceededError as error:\n"
    "    print('refused', type(error).__name__, error)"
)
UNPRICED_MODEL = "openai/house-model-without-a-price"


def inflated(responder: Any) -> Any:
    """`responder`, its usage reported `INFLATION` times over (as a provider whose tokenizer counts
    far more than tiktoken does)."""

    def respond(request: dict[str, Any]) -> Reply:
        reply = responder(request)
        reply = Reply(content=reply) if isinstance(reply, str) else reply
        return dataclasses.replace(reply, usage_factor=INFLATION)

    return respond


def sub_requests(server: ScriptedServer) -> int:
    return sum(1 for request in server.chat_requests() if is_sub_call(request))


async def test_a_provider_counting_more_than_the_estimate_cannot_pass_the_dollar_cap(
    scripted_server: ScriptedServer,
) -> None:
    cap = 0.3
    scripted_server.respond_with(inflated(scripted({QUERY: [FAN_OUT_CELL, repl("FINAL('done')")]})))
    run = make_run(scripted_server, prices=PRICES, budget=Budget(max_cost_usd=cap, concurrency=32))
    result, events = await run_to_end(run)

    costs = [e.cost_usd or 0.0 for e in of_type(events, LLMResponded)]
    one_call = max(costs)
    assert sum(costs) == pytest.approx(result.cost_usd)
    assert result.cost_usd <= cap + one_call
    assert all(e.cost_usd <= cap + one_call for e in of_type(events, BudgetUpdated))
    assert 0 < sub_requests(scripted_server) < FAN_OUT
    assert result.status == "budget_exceeded"
    assert result.refused_calls > 0
    assert of_type(events, BudgetExceeded)[0].limit == "max_cost_usd"
    assert "refused BudgetExceededError" in of_type(events, TurnExecuted)[0].observation


async def test_a_provider_counting_more_than_the_estimate_cannot_pass_the_token_cap(
    scripted_server: ScriptedServer,
) -> None:
    cap = 300_000
    scripted_server.respond_with(inflated(scripted({QUERY: [FAN_OUT_CELL, repl("FINAL('done')")]})))
    run = make_run(scripted_server, budget=Budget(max_tokens=cap, concurrency=32))
    result, events = await run_to_end(run)

    sizes = [e.input_tokens + e.output_tokens for e in of_type(events, LLMResponded)]
    assert result.input_tokens + result.output_tokens == sum(sizes)
    assert sum(sizes) <= cap + max(sizes)
    assert 0 < sub_requests(scripted_server) < FAN_OUT
    assert result.status == "budget_exceeded"


async def test_calls_cut_off_by_the_time_limit_are_charged_what_they_held(
    scripted_server: ScriptedServer,
) -> None:
    cell = repl("llm_query_batched(['slow one', 'slow two', 'slow three'])")
    scripted_server.respond_with(
        scripted({QUERY: [cell]}, sub=Reply(content="too late", delay_s=10))
    )
    run = make_run(scripted_server, prices=PRICES, budget=Budget(timeout_s=4))
    result, events = await run_to_end(run)

    answered = {e.request_id: e for e in of_type(events, LLMResponded)}
    cut_off = [e for e in of_type(events, LLMRequestSent) if e.request_id not in answered]
    assert (result.status, len(cut_off)) == ("timeout", 3)
    replied = sum(e.input_tokens + e.output_tokens for e in answered.values())
    held = sum(e.reserved_tokens for e in cut_off)
    assert result.input_tokens + result.output_tokens == replied + held
    assert result.cost_usd > sum(e.cost_usd or 0.0 for e in answered.values())


def test_a_dollar_cap_refuses_a_run_model_without_a_price(scripted_server: ScriptedServer) -> None:
    config = RunConfig(
        query=QUERY, model=TEST_MODEL, api_base=scripted_server.base_url, mode="rlm",
        budget=Budget(max_cost_usd=1.0),
    )  # fmt: skip
    with pytest.raises(ConfigError) as refused:
        Run(config, [DOCUMENT], folders=paths.engine_folders())
    assert refused.value.setting == "prices"
    assert f"has none for {TEST_MODEL}" in str(refused.value)
    assert scripted_server.chat_requests() == []


async def test_a_model_named_by_model_code_without_a_price_is_refused_under_a_dollar_cap(
    scripted_server: ScriptedServer,
) -> None:
    cell = repl(
        "try:\n"
        f"    llm_query('hello', model={UNPRICED_MODEL!r})\n"
        "except BudgetExceededError as error:\n"
        "    print('refused:', error)"
    )
    scripted_server.respond_with(scripted({QUERY: [cell, repl("FINAL('done anyway')")]}))
    run = make_run(scripted_server, prices=PRICES, budget=Budget(max_cost_usd=1.0))
    result, events = await run_to_end(run)

    assert "refused:" in of_type(events, TurnExecuted)[0].observation
    assert f"{UNPRICED_MODEL} has no price" in of_type(events, TurnExecuted)[0].observation
    assert not any(r["model"] == UNPRICED_MODEL.split("/", 1)[1] for r in scripted_server.requests)
    assert (result.status, result.answer, result.refused_calls) == (
        "budget_exceeded",
        "done anyway",
        1,
    )
    assert result.error == "answered after the budget ran out (1 call refused)"


def cli_run(server: ScriptedServer, home: Path, document: Path, *flags: str) -> Any:
    return run_cli(
        "run", "--query", QUERY, "--doc", str(document), "--model", TEST_MODEL,
        "--api-base", server.base_url, "--mode", "rlm", *flags, home=home,
    )  # fmt: skip


def test_the_command_line_refuses_an_unpriced_model_under_a_dollar_cap_in_one_line(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    """A provider's own model (no --api-base: a model served there counts at $0, see
    tests/test_cli_local_free.py)."""
    document = tmp_path / "notes.txt"
    document.write_text("The meeting is on Tuesday.\n")
    result = run_cli(
        "run", "--query", QUERY, "--doc", str(document), "--model", TEST_MODEL, "--mode", "rlm",
        "--max-cost", "1", home=isolated_home,
    )  # fmt: skip

    assert (result.returncode, result.stdout) == (2, "")
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"rlm-desktop run: --price has none for {TEST_MODEL}")
    assert "remove the dollar cap" in line
    assert scripted_server.chat_requests() == []


def test_the_command_line_shows_an_answer_that_came_after_the_budget_ran_out(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("The meeting is on Tuesday.\n")
    cell = repl(
        "try:\n"
        f"    llm_query('hello', model={UNPRICED_MODEL!r})\n"
        "except BudgetExceededError as error:\n"
        "    print('refused:', error)"
    )
    scripted_server.respond_with(scripted({QUERY: [cell, repl("FINAL('Tuesday')")]}))
    price = f"{TEST_MODEL}=1,2"
    result = cli_run(scripted_server, isolated_home, document, "--max-cost", "1", "--price", price)

    assert result.returncode == 1, result.stderr
    assert result.stdout == "Tuesday\n"
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "rlm-desktop run: answered after the budget ran out (1 call refused)"
    )
