"""One trial: a task run under a setting, and what came of it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class TrialResult:
    """How one run of the evaluation ended and how its answer scored.

    `status` is the run's (`completed`, `max_turns`, `budget_exceeded`, `timeout`, `error`), or
    `refused` when the engine would not start it (the reason in `error`); any status but
    `completed` counts as a failure. `score` is the answer's score whatever the status (0 for
    no answer).
    """

    evaluation_id: str
    setting: str
    task_id: str
    kind: str
    length: int
    session_id: str | None
    status: str
    score: float
    cost_usd: float
    input_tokens: int
    output_tokens: int
    wall_s: float
    sub_calls: int
    unpriced: bool
    answer: str
    gold: str
    error: str | None = None

    @property
    def failed(self) -> bool:
        """True when the run did not complete normally."""
        return self.status != "completed"

    @property
    def tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready (and CSV-ready) row."""
        return asdict(self)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> TrialResult:
        """A result from a stored row (extra columns ignored)."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in row.items() if k in names}
        values["unpriced"] = bool(values.get("unpriced"))
        return cls(**values)


COLUMNS = tuple(f.name for f in fields(TrialResult))
