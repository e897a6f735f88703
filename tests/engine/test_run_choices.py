"""What a user chose becomes a `RunConfig` in one place: the engine's defaults where nothing was
chosen, and the window's rule for unpriced models on the user's own server only when asked."""

from __future__ import annotations

from rlm_desktop.engine import Budget, RunConfig
from rlm_desktop.engine.config import AUTO_DIRECT_MAX_TOKENS
from rlm_desktop.engine.run_choices import RunChoices, build_run_config, free_local_models

LOCAL = "http://127.0.0.1:1/v1"
UNPRICED = "openai/no-such-model-anywhere"


def test_nothing_chosen_is_the_engines_configuration() -> None:
    assert build_run_config(RunChoices(query="q")) == RunConfig(query="q")


def test_every_choice_reaches_the_configuration() -> None:
    budget = Budget(max_depth=3, max_turns=7, max_cost_usd=0.5, timeout_s=None)
    choices = RunChoices(
        query="q", model="openai/gpt-4o", sub_model="openai/gpt-4o-mini", api_base=LOCAL,
        mode="rlm", profile="careful", budget=budget, prices={"openai/gpt-4o": (1e-6, 2e-6)},
        allow_read=["/tmp"], require_isolation=True, compact_tokens=5_000,
        auto_direct_max_tokens=3_000, follows="s1", conversation_id="s0",
    )  # fmt: skip
    config = build_run_config(choices)
    assert config == RunConfig(
        query="q", model="openai/gpt-4o", sub_model="openai/gpt-4o-mini", api_base=LOCAL,
        mode="rlm", profile="careful", budget=budget, prices={"openai/gpt-4o": (1e-6, 2e-6)},
        allow_read=("/tmp",), require_isolation=True, compact_tokens=5_000,
        auto_direct_max_tokens=3_000, follows="s1", conversation_id="s0",
    )  # fmt: skip


def test_compact_tokens_zero_leaves_only_the_windows_share() -> None:
    assert build_run_config(RunChoices(query="q", compact_tokens=0)).compact_tokens is None
    assert build_run_config(RunChoices(query="q", compact_tokens=None)).compact_tokens is None


def test_no_auto_threshold_is_the_default_one() -> None:
    config = build_run_config(RunChoices(query="q", auto_direct_max_tokens=None))
    assert config.auto_direct_max_tokens == AUTO_DIRECT_MAX_TOKENS


def test_an_unpriced_local_model_is_free_under_a_cap_only_when_the_caller_says_so() -> None:
    choices = RunChoices(
        query="q", model=UNPRICED, api_base=LOCAL, budget=Budget(max_cost_usd=1.0)
    )
    assert free_local_models(choices) == [UNPRICED]
    assert build_run_config(choices, local_models_free=True).prices == {UNPRICED: (0.0, 0.0)}
    assert build_run_config(choices).prices == {}


def test_a_price_given_or_no_cap_or_no_local_server_leaves_prices_alone() -> None:
    capped = Budget(max_cost_usd=1.0)
    priced = RunChoices(
        query="q", model=UNPRICED, api_base=LOCAL, budget=capped, prices={UNPRICED: (1e-6, 0.0)}
    )
    uncapped = RunChoices(query="q", model=UNPRICED, api_base=LOCAL)
    provider = RunChoices(query="q", model=UNPRICED, budget=capped)
    for choices in (priced, uncapped, provider):
        assert free_local_models(choices) == []
        config = build_run_config(choices, local_models_free=True)
        assert config.prices == dict(choices.prices)
