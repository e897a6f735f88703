"""What a run is asked to do: the query, the models, the mode and the budget."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["auto", "rlm", "direct"]
PLACEHOLDER_API_KEY = "sk-local-placeholder"
DEFAULT_MODEL = "openai/gpt-5-mini"
DEFAULT_MODE: Mode = "auto"
AUTO_DIRECT_MAX_TOKENS = 16_000


class ConfigError(ValueError):
    """A run configuration that cannot work; the message says how to fix it."""


@dataclass(frozen=True)
class Budget:
    """Tree-wide limits of one run. `None` means no cap."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_sub_calls: int | None = None
    max_depth: int = 2
    max_turns: int = 20
    timeout_s: float | None = 1800.0
    cell_timeout_s: float = 60.0
    concurrency: int = 16

    def validate(self) -> None:
        """Raise `ConfigError` for a limit that makes no sense."""
        checks: list[tuple[bool, str]] = [
            (self.max_cost_usd is not None and self.max_cost_usd <= 0, "--max-cost must be > 0"),
            (self.max_tokens is not None and self.max_tokens <= 0, "--max-tokens must be > 0"),
            (
                self.max_sub_calls is not None and self.max_sub_calls < 0,
                "--max-sub-calls must be >= 0",
            ),
            (self.max_depth < 1, "--max-depth must be at least 1 (1: only the root has a REPL)"),
            (self.max_turns < 1, "--max-turns must be at least 1"),
            (self.timeout_s is not None and self.timeout_s <= 0, "--timeout must be > 0 seconds"),
            (self.cell_timeout_s <= 0, "--cell-timeout must be > 0 seconds"),
            (self.concurrency < 1, "--concurrency must be at least 1"),
        ]
        for failed, message in checks:
            if failed:
                raise ConfigError(message)


STARTER_BUDGET = Budget(max_cost_usd=1.0, max_tokens=2_000_000, max_sub_calls=200)
"""The caps a new user of the app starts from, so a run that goes wrong costs at most a dollar.
(`Budget()`, the command line's default, has no caps: a script states its own.)"""


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run except the documents and the credentials.

    API keys are deliberately not part of this object: it is recorded with the session.
    """

    query: str
    model: str = DEFAULT_MODEL
    sub_model: str | None = None
    api_base: str | None = None
    mode: Mode = DEFAULT_MODE
    profile: str | None = None
    budget: Budget = field(default_factory=Budget)
    output_limit_chars: int = 20_000
    stored_output_cap_chars: int = 1_000_000
    memory_limit_mb: int | None = 4096
    request_timeout_s: float = 600.0
    max_retries: int = 5
    auto_direct_max_tokens: int = AUTO_DIRECT_MAX_TOKENS
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    """User prices per model: (USD per input token, USD per output token)."""

    @property
    def effective_sub_model(self) -> str:
        """The model for `llm_query` when the code names none."""
        return self.sub_model or self.model

    def validate(self) -> None:
        """Raise `ConfigError` for a configuration that cannot run."""
        if not self.query.strip():
            raise ConfigError("the query is empty: pass --query with a question")
        if not self.model.strip():
            raise ConfigError("no model given: pass --model, e.g. openai/gpt-5-mini")
        if self.mode not in ("auto", "rlm", "direct"):
            raise ConfigError(f"unknown mode {self.mode!r}: use auto, rlm or direct")
        if self.output_limit_chars < 200:
            raise ConfigError("the output limit must be at least 200 characters")
        self.budget.validate()

    def to_settings(self) -> dict[str, Any]:
        """A JSON-ready record of the settings (no secrets: there are none in this object)."""
        data = dataclasses.asdict(self)
        data["prices"] = {name: list(pair) for name, pair in self.prices.items()}
        return data
