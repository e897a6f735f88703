"""Settings that cannot work are refused in the engine's own terms: the field at fault, and why."""

from __future__ import annotations

import math

import pytest

from rlm_desktop.engine import Budget, ConfigError, RunConfig


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        (Budget(max_cost_usd=0), "max_cost_usd must be > 0"),
        (Budget(max_cost_usd=math.nan), "max_cost_usd must be > 0"),
        (Budget(max_tokens=-5), "max_tokens must be > 0"),
        (Budget(max_sub_calls=-1), "max_sub_calls must be >= 0"),
        (Budget(max_depth=0), "max_depth must be at least 1 (1: only the root has a REPL)"),
        (Budget(max_turns=0), "max_turns must be at least 1"),
        (Budget(timeout_s=math.nan), "timeout_s must be > 0 seconds"),
        (Budget(cell_timeout_s=0), "cell_timeout_s must be > 0 seconds"),
        (Budget(concurrency=0), "concurrency must be at least 1"),
    ],
)
def test_a_limit_that_makes_no_sense_is_named_by_its_field(budget: Budget, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        budget.validate()
    assert str(refused.value) == message
    assert refused.value.setting == message.split()[0]


@pytest.mark.parametrize(
    ("changes", "setting"),
    [
        ({"query": "  "}, "query"),
        ({"model": ""}, "model"),
        ({"mode": "fast"}, "mode"),
        ({"output_limit_chars": 10}, "output_limit_chars"),
        ({"budget": Budget(max_depth=0)}, "max_depth"),
    ],
)
def test_a_run_config_that_cannot_run_names_its_setting(
    changes: dict[str, object], setting: str
) -> None:
    config = RunConfig(**{"query": "What is in the ledger?", **changes})
    with pytest.raises(ConfigError) as refused:
        config.validate()
    assert refused.value.setting == setting
    assert str(refused.value).startswith(f"{setting} ")
    assert "--" not in str(refused.value)


def test_a_caller_names_the_setting_in_its_own_words() -> None:
    error = ConfigError("must be > 0", "max_cost_usd")
    assert error.worded({"max_cost_usd": "--max-cost"}) == "--max-cost must be > 0"
    assert error.worded({"max_cost_usd": "Max cost"}) == "Max cost must be > 0"
    assert error.worded({}) == "max_cost_usd must be > 0"


def test_an_error_about_no_one_setting_reads_the_same_to_every_caller() -> None:
    error = ConfigError("profiles.toml: not valid TOML")
    assert error.setting is None
    assert str(error) == error.worded({"profile": "--profile"}) == "profiles.toml: not valid TOML"


def test_the_defaults_are_valid() -> None:
    RunConfig(query="What is in the ledger?").validate()
