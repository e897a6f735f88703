"""How an evaluation runs: endpoint, prices, concurrency and the total budget."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from rlm_desktop.engine.config import ConfigError

DEFAULT_CONCURRENCY = 2
DEFAULT_RUN_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class EvaluationOptions:
    """What applies to every run of an evaluation.

    `max_cost_usd` and `max_tokens` cap the whole evaluation (see `allowance`); `concurrency`
    is how many runs go at once (each run's own sub-calls run concurrently inside it as usual);
    `prices` are USD per token, as `RunConfig.prices`.
    """

    api_base: str | None = None
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    concurrency: int = DEFAULT_CONCURRENCY
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    run_timeout_s: float | None = DEFAULT_RUN_TIMEOUT_S

    def validate(self) -> None:
        """Raise `ConfigError` naming the first option that cannot work."""
        if not self.concurrency >= 1:
            raise ConfigError("must be at least 1", "concurrency")
        if self.max_cost_usd is not None and not self.max_cost_usd > 0:
            raise ConfigError("must be > 0", "max_cost_usd")
        if self.max_tokens is not None and not self.max_tokens > 0:
            raise ConfigError("must be > 0", "max_tokens")
        if self.run_timeout_s is not None and not self.run_timeout_s > 0:
            raise ConfigError("must be > 0 seconds", "timeout_s")

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record, read back by `from_json`."""
        data = asdict(self)
        data["prices"] = {name: list(pair) for name, pair in self.prices.items()}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvaluationOptions:
        """The options `to_json` recorded."""
        prices = {name: (float(a), float(b)) for name, (a, b) in data.get("prices", {}).items()}
        return cls(**{**data, "prices": prices})
