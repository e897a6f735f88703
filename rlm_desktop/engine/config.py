"""What a run is asked to do: the query, the models, the mode and the budget."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["auto", "rlm", "direct"]
PLACEHOLDER_API_KEY = "sk-local-placeholder"
DEFAULT_MODEL = "openai/gpt-5-mini"
DEFAULT_MODE: Mode = "auto"
SandboxChoice = Literal["auto", "kernel", "wasm"]
SANDBOX_CHOICES: tuple[SandboxChoice, ...] = ("auto", "kernel", "wasm")
AUTO_DIRECT_MAX_TOKENS = 16_000
DEFAULT_COMPACT_TOKENS = 100_000
"""Compact an RLM call's conversation once it reaches this many input tokens (`--compact-tokens`):
every later turn then costs about what a turn near the start of the call did."""
DEFAULT_COMPACT_WINDOW_SHARE = 0.8
"""Compact an RLM call's conversation once it fills this share of the model's context window."""
DEFAULT_STATE_CAP_MB = 64
"""The most a question keeps of its REPL variables for a follow-up; what does not fit is named."""
DEFAULT_MAX_TASKS = 256
"""Tasks (processes and threads) all of a run's model code may have at once, the launcher included.
A worker is two threads at rest, so 64 concurrent child calls under a root take about 130."""
DEFAULT_SCRATCH_QUOTA_MB = 2048
"""The most the files model code writes in a run's scratch folder may take (`--scratch-quota`,
Settings → Sandbox): a file system of that size in memory where the kernel sandbox gives the run
a mount namespace (the files then never reach the disk and go with the run), else checked on disk
while the run goes on, never into the room the data folder keeps for the session's record
(engine/sandbox/scratch_quota.py)."""
MAX_SCRATCH_QUOTA_MB = 1_048_576
DEFAULT_STORED_TEXT_CAP_CHARS = 256_000_000
"""The most text one session keeps in the database (its event log and the prompts it keeps once):
model code can send and print far more. What passes it is kept as a head with a note (store/
allowance.py)."""
DEFAULT_MEMORY_LIMIT_MB = 4096
"""The memory all of a run's REPL processes share where a cgroup holds them (engine/sandbox/
run_bounds.py); each process is also held to it alone (address space). Without a cgroup it is a
bound per REPL process, and model code may start no process of its own."""


class ConfigError(ValueError):
    """A run configuration that cannot work, in the engine's terms; it says how to fix it.

    `setting` is the `RunConfig` or `Budget` field at fault (None when no one field is, e.g. a
    broken profile file); `problem` says what is wrong, worded to follow the setting's name.
    `str()` puts the two together, e.g. "max_cost_usd must be > 0"; `worded` lets a caller name
    the setting its own way (the CLI by its flag, the GUI by its field's label).
    """

    def __init__(self, problem: str, setting: str | None = None) -> None:
        super().__init__(f"{setting} {problem}" if setting else problem)
        self.problem = problem
        self.setting = setting

    def worded(self, names: Mapping[str, str]) -> str:
        """The message with the setting called `names[setting]` (its field name if not listed)."""
        if self.setting is None:
            return self.problem
        return f"{names.get(self.setting, self.setting)} {self.problem}"


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
        """Raise `ConfigError` naming the first limit that makes no sense."""
        # Written as `not x > 0` so that NaN (which compares false either way) is refused too.
        checks: list[tuple[str, bool, str]] = [
            ("max_cost_usd", _set_and_not_positive(self.max_cost_usd), "must be > 0"),
            ("max_tokens", _set_and_not_positive(self.max_tokens), "must be > 0"),
            (
                "max_sub_calls",
                self.max_sub_calls is not None and not self.max_sub_calls >= 0,
                "must be >= 0",
            ),
            (
                "max_depth",
                not self.max_depth >= 1,
                "must be at least 1 (1: only the root has a REPL)",
            ),
            ("max_turns", not self.max_turns >= 1, "must be at least 1"),
            ("timeout_s", _set_and_not_positive(self.timeout_s), "must be > 0 seconds"),
            ("cell_timeout_s", not self.cell_timeout_s > 0, "must be > 0 seconds"),
            ("concurrency", not self.concurrency >= 1, "must be at least 1"),
        ]
        for setting, failed, problem in checks:
            if failed:
                raise ConfigError(problem, setting)


def _set_and_not_positive(value: float | None) -> bool:
    return value is not None and not value > 0


STARTER_BUDGET = Budget(max_cost_usd=1.0, max_tokens=2_000_000, max_sub_calls=200)
"""The caps a new user of the app starts from, so a run that goes wrong costs at most a dollar.
(`Budget()`, the command line's default, has no caps: a script states its own.)"""


@dataclass(frozen=True)
class RunBasics:
    """What a user says of every run, in the same words as the engine: the question, the models,
    the endpoint, the mode, the profile and the budget (see `RunConfig` and `RunChoices`)."""

    query: str
    model: str = DEFAULT_MODEL
    sub_model: str | None = None
    api_base: str | None = None
    mode: Mode = DEFAULT_MODE
    profile: str | None = None
    budget: Budget = field(default_factory=Budget)


@dataclass(frozen=True)
class RunConfig(RunBasics):
    """Everything that defines a run except the documents and the credentials.

    API keys are deliberately not part of this object: it is recorded with the session.
    """

    output_limit_chars: int = 20_000
    stored_output_cap_chars: int = 1_000_000
    stored_text_cap_chars: int = DEFAULT_STORED_TEXT_CAP_CHARS
    """The most text the session keeps in the database; see DEFAULT_STORED_TEXT_CAP_CHARS."""
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB
    """See DEFAULT_MEMORY_LIMIT_MB; None: no memory bound."""
    request_timeout_s: float = 600.0
    """The longest a request may wait for the first byte of its reply (a local model reads its
    whole prompt before it writes)."""
    stream_silence_s: float = 120.0
    """The longest a reply may go silent once it has begun; a model still writing is never cut."""
    max_retries: int = 5
    auto_direct_max_tokens: int = AUTO_DIRECT_MAX_TOKENS
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    """User prices per model: (USD per input token, USD per output token)."""
    allow_read: tuple[str, ...] = ()
    """Folders (or files) model code may read, read-only, besides Python's own; nothing else of
    the machine is opened to it where the kernel sandbox applies."""
    require_isolation: bool = False
    """Refuse to run model code unless the sandbox isolates both the filesystem and the network."""
    max_tasks: int = DEFAULT_MAX_TASKS
    """Processes and threads all of a run's model code may have at once (the sandbox's cap)."""
    scratch_quota_mb: int = DEFAULT_SCRATCH_QUOTA_MB
    """The most the files model code writes in the run's scratch folder may take (see
    DEFAULT_SCRATCH_QUOTA_MB)."""
    compact_tokens: int | None = DEFAULT_COMPACT_TOKENS
    """Compact an RLM call's conversation at this many input tokens (None: only the window counts)."""
    compact_window_share: float | None = DEFAULT_COMPACT_WINDOW_SHARE
    """Compact an RLM call's conversation once it fills this share of the model's window (None,
    with `compact_tokens` None too: never compact)."""
    follows: str | None = None
    """The session this question follows up on: its REPL variables, questions and answers carry
    over, and documents added since become `context_1`, ... (None: a question on its own)."""
    conversation_id: str | None = None
    """The conversation a follow-up belongs to: its first question's session id (set by the
    engine from `follows` when not given)."""
    repl_state_cap_mb: int = DEFAULT_STATE_CAP_MB
    """The most the root's REPL variables may take when kept for a follow-up (0: keep none)."""
    sandbox: SandboxChoice = "auto"
    """Which sandbox runs model code: `kernel` (the OS's own), `wasm` (a WebAssembly Python,
    everywhere) or `auto` (kernel where the OS gives one, else wasm); see sandbox/choice.py."""
    evaluation_id: str | None = None
    """The evaluation this run is a trial of (set by the evaluation runner; None: a user's own
    question). Recorded with the settings, so a review can tell a trial's chosen settings from
    a user's."""

    @property
    def effective_sub_model(self) -> str:
        """The model for `llm_query` when the code names none."""
        return self.sub_model or self.model

    def validate(self) -> None:
        """Raise `ConfigError` for a configuration that cannot run."""
        if not self.query.strip():
            raise ConfigError("is empty: ask a question", "query")
        if not self.model.strip():
            raise ConfigError(f"is empty: name a litellm model, e.g. {DEFAULT_MODEL}", "model")
        if self.mode not in ("auto", "rlm", "direct"):
            raise ConfigError(f"{self.mode!r} is unknown: use auto, rlm or direct", "mode")
        if not self.output_limit_chars >= 200:
            raise ConfigError("must be at least 200 characters", "output_limit_chars")
        if not self.stored_text_cap_chars >= 1_000_000:
            raise ConfigError("must be at least 1,000,000 characters", "stored_text_cap_chars")
        if self.sandbox not in SANDBOX_CHOICES:
            raise ConfigError(f"{self.sandbox!r} is unknown: use auto, kernel or wasm", "sandbox")
        if not self.max_tasks >= 16:
            raise ConfigError("must be at least 16", "max_tasks")
        if not 1 <= self.scratch_quota_mb <= MAX_SCRATCH_QUOTA_MB:
            raise ConfigError(
                f"must be between 1 and {MAX_SCRATCH_QUOTA_MB:,} MB", "scratch_quota_mb"
            )
        if self.compact_tokens is not None and not self.compact_tokens >= 1_000:
            raise ConfigError("must be at least 1,000 tokens", "compact_tokens")
        share = self.compact_window_share
        if share is not None and not 0 < share <= 1:
            raise ConfigError(
                "must be between 0 and 1 (a share of the window)", "compact_window_share"
            )
        if not self.repl_state_cap_mb >= 0:
            raise ConfigError("must be >= 0 (0 keeps no REPL variables)", "repl_state_cap_mb")
        for path in self.allow_read:
            if not os.path.exists(os.path.expanduser(path)):
                raise ConfigError(f"{path!r} does not exist", "allow_read")
        self.budget.validate()

    def to_settings(self) -> dict[str, Any]:
        """A JSON-ready record of the settings (no secrets: there are none in this object)."""
        data = dataclasses.asdict(self)
        data["prices"] = {name: list(pair) for name, pair in self.prices.items()}
        data["allow_read"] = list(self.allow_read)
        return data
