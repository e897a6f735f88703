"""The command line, the window and the evaluation runner make the same `RunConfig` from the same
choices: a default that one of them set on its own would show here as a difference."""

from __future__ import annotations

from rlm_desktop.cli import build_parser
from rlm_desktop.commands.run import config_from_args
from rlm_desktop.engine import Budget, RunConfig
from rlm_desktop.engine.config import SandboxChoice
from rlm_desktop.engine.pricing import parse_prices
from rlm_desktop.evaluation.allowance import Grant
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.runner import run_config
from rlm_desktop.evaluation.settings import Setting
from rlm_desktop.evaluation.tasks import Task
from rlm_desktop.ui.run.controls import RunRequest
from rlm_desktop.ui.run.starter import build_config

QUESTION = "How many zebrafish?"
PRICE = "openai/gpt-4o=2.5,10"


def _task() -> Task:
    return Task("t1", "needle", (("memo", "text"),), QUESTION, "7", "exact", 100)


def from_each_caller(
    *, model: str, sub_model: str | None, api_base: str | None, profile: str | None,
    depth: int, turns: int, cost: float | None, tokens: int | None, timeout: float | None,
    sandbox: SandboxChoice = "auto",
) -> list[RunConfig]:  # fmt: skip
    """The configuration the CLI, the window and the evaluation runner make of one choice."""
    flags = ["run", "--query", QUESTION, "--model", model, "--mode", "rlm", "--price", PRICE,
             "--max-depth", str(depth), "--max-turns", str(turns), "--sandbox", sandbox]  # fmt: skip
    for flag, value in [
        ("--sub-model", sub_model), ("--api-base", api_base), ("--profile", profile),
        ("--max-cost", cost), ("--max-tokens", tokens), ("--timeout", timeout),
    ]:  # fmt: skip
        flags += [flag, str(value)] if value is not None else []
    budget = Budget(
        max_depth=depth, max_turns=turns, max_cost_usd=cost, max_tokens=tokens, timeout_s=timeout
    )
    request = RunRequest(
        query=QUESTION, model=model, sub_model=sub_model, api_base=api_base, mode="rlm",
        profile=profile, budget=budget,
    )  # fmt: skip
    setting = Setting(
        name="s", model=model, sub_model=sub_model, mode="rlm", depth=depth, profile=profile,
        max_turns=turns, sandbox=sandbox,
    )  # fmt: skip
    options = EvaluationOptions(api_base=api_base, prices=parse_prices(PRICE), run_timeout_s=timeout)
    return [
        config_from_args(build_parser().parse_args(flags)),
        build_config(request, PRICE, sandbox=sandbox),
        run_config(setting, _task(), options, Grant(cost, tokens)),
    ]


def test_the_three_callers_agree_on_a_run_left_at_the_engines_limits() -> None:
    limits = Budget()
    cli, window, evaluation = from_each_caller(
        model="openai/gpt-4o", sub_model=None, api_base=None, profile=None,
        depth=limits.max_depth, turns=limits.max_turns, cost=None, tokens=None,
        timeout=limits.timeout_s,
    )  # fmt: skip
    assert cli == window == evaluation
    assert cli.budget == limits


def test_the_three_callers_agree_on_every_choice_they_share() -> None:
    cli, window, evaluation = from_each_caller(
        model="openai/gpt-4o", sub_model="openai/gpt-4o-mini", api_base="http://127.0.0.1:1/v1",
        profile="careful", depth=3, turns=7, cost=0.5, tokens=9_000, timeout=120.0,
        sandbox="wasm",
    )  # fmt: skip
    assert cli == window == evaluation
    assert cli.prices == parse_prices(PRICE)
    assert cli.sandbox == "wasm"
