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
    no answer). The `gold_*` and `sources_*` counts are the answer's `SourceTally`
    (`source_scores`).
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
    gold_spans: int = 0
    """Gold spans a full citation covers (0: none known, or the sources could not be checked)."""
    gold_cited: int = 0
    sources_checked: int = 0
    """Sources and quoted passages of the answer checked against the documents."""
    sources_not_found: int = 0
    executor: str = "local"
    """Where the trial ran: `local` (this machine) or `ray` (a node of a cluster)."""
    node: str = ""
    """The node it ran on (`RanOn.label`); empty when it never reached one."""
    attempts: int = 1
    """2 for a trial run again because its node died mid-trial."""

    @property
    def source_score(self) -> float | None:
        """The share of the gold spans the answer's sources cite; None (not applicable) when
        the task has no known gold location or the trial gave no answer."""
        if not self.gold_spans or not self.answer:
            return None
        return self.gold_cited / self.gold_spans

    @property
    def failed(self) -> bool:
        """True when the run did not complete normally."""
        return self.status != "completed"

    @property
    def tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready (and CSV-ready) row, with its `source_score`."""
        return {**asdict(self), "source_score": self.source_score}

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> TrialResult:
        """A result from a stored row (extra columns ignored; counts a row stored before
        sources were scored lacks read as 0)."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in row.items() if k in names}
        values["unpriced"] = bool(values.get("unpriced"))
        for name in SOURCE_COUNTS:
            values[name] = int(values.get(name) or 0)
        values["executor"] = values.get("executor") or "local"
        values["node"] = values.get("node") or ""
        values["attempts"] = int(values.get("attempts") or 1)
        return cls(**values)


SOURCE_COUNTS = ("gold_spans", "gold_cited", "sources_checked", "sources_not_found")
COLUMNS = (*(f.name for f in fields(TrialResult)), "source_score")
