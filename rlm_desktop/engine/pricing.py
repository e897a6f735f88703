"""Prices and limits per model, from litellm's bundled price map plus the user's own prices."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rlm_desktop.engine.config import ConfigError, RunConfig
from rlm_desktop.litellm_files import bundled_price_map

PER_MILLION = 1_000_000
PRICE_FORMAT = "write `MODEL = INPUT, OUTPUT` in US dollars per million tokens"

DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_OUTPUT = 8_192


@dataclass(frozen=True)
class ModelInfo:
    """What the engine needs to know about a model: prices (None when unpriced) and limits."""

    name: str
    input_cost_per_token: float | None
    output_cost_per_token: float | None
    context_window: int
    max_output_tokens: int

    @property
    def priced(self) -> bool:
        """True when both prices are known."""
        return self.input_cost_per_token is not None and self.output_cost_per_token is not None

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """The dollar cost of a call, or None for an unpriced model."""
        if self.input_cost_per_token is None or self.output_cost_per_token is None:
            return None
        return input_tokens * self.input_cost_per_token + output_tokens * self.output_cost_per_token


class PriceBook:
    """Looks models up in litellm's bundled map; user prices win, and so does the context window
    a model's server says it gives (`learn_window`). Results are cached per name."""

    def __init__(self, user_prices: dict[str, tuple[float, float]] | None = None) -> None:
        self._user_prices = dict(user_prices or {})
        self._windows: dict[str, int] = {}
        self._cache: dict[str, ModelInfo] = {}

    def learn_window(self, model: str, tokens: int) -> None:
        """Take `tokens` as `model`'s context window from now on: its server's own figure."""
        self._windows[model] = tokens
        self._cache.pop(model, None)

    def info(self, model: str) -> ModelInfo:
        """Prices and limits for a litellm model string."""
        cached = self._cache.get(model)
        if cached is None:
            cached = self._cache[model] = self._lookup(model)
        return cached

    def _lookup(self, model: str) -> ModelInfo:
        entry = _bundled_entry(model)
        window = (
            self._windows.get(model)
            or _as_int(entry.get("max_input_tokens"))
            or DEFAULT_CONTEXT_WINDOW
        )
        max_out = (
            _as_int(entry.get("max_output_tokens"))
            or _as_int(entry.get("max_tokens"))
            or DEFAULT_MAX_OUTPUT
        )
        user = self._user_prices.get(model)
        input_price: float | None
        output_price: float | None
        if user is not None:
            input_price, output_price = user
        else:
            input_price = _as_float(entry.get("input_cost_per_token"))
            output_price = _as_float(entry.get("output_cost_per_token"))
        return ModelInfo(model, input_price, output_price, window, max_out)


def refuse_unpriced_under_cap(config: RunConfig, prices: PriceBook) -> None:
    """Raise `ConfigError` (setting `prices`) when a dollar cap is set and the run's model or
    sub-model has no price: the cap could not count their calls. Models that model code names
    itself are refused at their first call by the ledger."""
    if config.budget.max_cost_usd is None:
        return
    for model in dict.fromkeys((config.model, config.effective_sub_model)):
        if not prices.info(model).priced:
            raise ConfigError(
                f"has none for {model}, which litellm's price map does not price either, so the "
                f"dollar cap cannot count its calls: give its price ({model} = INPUT, OUTPUT in "
                "US dollars per million tokens; 0, 0 for a free local model) or remove the "
                "dollar cap",
                "prices",
            )


def _bundled_entry(model: str) -> dict[str, Any]:
    cost_map = bundled_price_map()
    candidates = [model]
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
    for name in candidates:
        entry = cost_map.get(name)
        if entry:
            return entry
    return {}


def _as_int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and value > 0 else None


def _as_float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def parse_prices(text: str) -> dict[str, tuple[float, float]]:
    """User prices from lines of `model = input, output` (USD per million tokens; `#` comments).

    Returns USD per token, as `RunConfig.prices` takes them. `model=input,output` (the CLI's
    `--price` form) is the same line.
    """
    prices: dict[str, tuple[float, float]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        model, _, numbers = line.partition("=")
        parts = [part.strip() for part in numbers.split(",")]
        try:
            values = [float(part) for part in parts]
        except ValueError:
            values = []
        if not model.strip() or len(values) != 2 or not all(0 <= v < math.inf for v in values):
            raise ConfigError(
                f"line {number} ({raw.strip()!r}) is not understood: {PRICE_FORMAT}", "prices"
            )
        prices[model.strip()] = (values[0] / PER_MILLION, values[1] / PER_MILLION)
    return prices
