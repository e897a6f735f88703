"""From what a user chose for a run to the engine's `RunConfig`, in one place.

The command line, the window and the evaluation runner each collect their own choices (flags,
fields, a setting and its task); the defaults, prices and budget rules are applied here, so a
default added once holds for all three.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields

from rlm_desktop.engine.config import (
    AUTO_DIRECT_MAX_TOKENS,
    DEFAULT_COMPACT_TOKENS,
    DEFAULT_SCRATCH_QUOTA_MB,
    RunBasics,
    RunConfig,
    SandboxChoice,
)
from rlm_desktop.engine.pricing import PriceBook


@dataclass(frozen=True)
class RunChoices(RunBasics):
    """What a user chose for one run; anything left out is the engine's default.

    Empty choices are None: the sub-model (the root model's), the endpoint (the provider's own
    API), the profile (chosen by model name). `budget` holds the caps as chosen (None: no cap);
    `prices` are USD per token, as `pricing.parse_prices` reads them.
    """

    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    allow_read: Sequence[str] = ()
    require_isolation: bool = False
    compact_tokens: int | None = DEFAULT_COMPACT_TOKENS
    """0 or None: compact only once the conversation fills its share of the model's window."""
    auto_direct_max_tokens: int | None = None
    """`auto` mode's direct-call threshold; None: `AUTO_DIRECT_MAX_TOKENS`."""
    follows: str | None = None
    """The saved session this question follows up on (see `RunConfig.follows`)."""
    conversation_id: str | None = None
    scratch_quota_mb: int = DEFAULT_SCRATCH_QUOTA_MB
    """The most model code's files may take (see `RunConfig.scratch_quota_mb`)."""
    sandbox: SandboxChoice = "auto"
    """Which sandbox runs model code (see `RunConfig.sandbox`)."""


_CONVERTED = {"prices", "allow_read", "compact_tokens", "auto_direct_max_tokens"}
"""The choices `build_run_config` puts in the engine's terms; the others reach it as chosen."""


def free_local_models(choices: RunChoices) -> list[str]:
    """The run's models that the user's own server serves (an endpoint is given) and that have
    no price, when a dollar cap is set: the ones `build_run_config(local_models_free=True)`
    counts at $0."""
    if not choices.api_base or not choices.budget.max_cost_usd:
        return []
    book = PriceBook(dict(choices.prices))
    models = dict.fromkeys([choices.model, choices.sub_model or choices.model])
    return [model for model in models if not book.info(model).priced]


def build_run_config(choices: RunChoices, *, local_models_free: bool = False) -> RunConfig:
    """The engine's configuration for `choices`.

    `local_models_free`: count `free_local_models` at $0 against the dollar cap, so that a first
    run on a local server is not refused (the window does, and says so); otherwise the engine
    refuses a dollar cap over a model without a price, and the user gives its price.
    """
    prices = dict(choices.prices)
    if local_models_free:
        prices |= {model: (0.0, 0.0) for model in free_local_models(choices)}
    as_chosen = {
        f.name: getattr(choices, f.name) for f in fields(choices) if f.name not in _CONVERTED
    }
    return RunConfig(
        **as_chosen,
        prices=prices,
        allow_read=tuple(choices.allow_read),
        compact_tokens=choices.compact_tokens or None,
        auto_direct_max_tokens=choices.auto_direct_max_tokens or AUTO_DIRECT_MAX_TOKENS,
    )
