"""One thing a run's health check found: its kind, how serious it is, the evidence and advice."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal[
    "weak_coder",
    "depth",
    "brittle_answer",
    "cost_tail",
    "duplicate_sub_calls",
    "serial_sub_calls",
    "short_input",
    "truncated",
    "no_reply",
    "ended_early",
    "provider_errors",
    "not_stored",
]
KIND_TITLES: dict[str, str] = {
    "weak_coder": "Weak coder",
    "depth": "Depth",
    "brittle_answer": "Brittle answer",
    "cost_tail": "Cost tail",
    "duplicate_sub_calls": "Duplicate sub-calls",
    "serial_sub_calls": "Serial sub-calls",
    "short_input": "Short input",
    "truncated": "Truncated replies",
    "no_reply": "No reply",
    "ended_early": "Ended early",
    "provider_errors": "Provider errors",
    "not_stored": "Not stored",
}
"""Each kind as the window names it (the id stays in JSON, the CLI and the docs)."""
WINDOW_SETTINGS = {
    "--max-sub-calls": "Budget → Sub-calls",
    "--max-turns": "Budget → Turns per call",
    "--max-cost": "Budget → Cost",
    "--max-depth": "Depth",
    "--api-base": "Endpoint",
    "--profile": "Profile",
    "--model": "Model",
    "--mode": "Mode",
}
"""The command line's flags that advice names, as the window's fields are labelled."""
Severity = Literal["warning", "info"]
TurnRef = tuple[str, int]
"""A turn as `(call_id, index)`, the index 0-based as the store keeps it."""


@dataclass(frozen=True)
class Finding:
    """A known RLM failure mode seen in a run.

    `rule` names the check inside its kind (`error_share`, `partial_answer`, ...); `message` says
    what was seen with its figures, `advice` what to change; `calls` and `turns` point at the
    evidence; `figures` holds the numbers the message quotes, for machines.
    """

    kind: Kind
    rule: str
    severity: Severity
    message: str
    advice: str
    calls: tuple[str, ...] = ()
    turns: tuple[TurnRef, ...] = ()
    figures: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The `findings` entry of DESIGN.md's JSON shapes, plus `rule`, `advice` and `figures`."""
        return {
            "kind": self.kind,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "advice": self.advice,
            "calls": list(self.calls),
            "turns": [[call_id, index] for call_id, index in self.turns],
            "figures": self.figures,
        }


def turn_name(turn: TurnRef) -> str:
    """`c3 turn 2` for `("c3", 1)`: turns are counted from 1 where people read them."""
    return f"{turn[0]} turn {turn[1] + 1}"


def listed(names: list[str] | tuple[str, ...], limit: int = 5) -> str:
    """`a, b, c` — or the first `limit` and how many more."""
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit:,} more"


def for_the_window(advice: str) -> str:
    """`advice` with the command line's flags named as the window's fields ("--max-depth" as
    "Depth"), longest first so "--max-sub-calls" is not read as "--max-..."."""
    for flag, field_name in sorted(WINDOW_SETTINGS.items(), key=lambda item: -len(item[0])):
        advice = advice.replace(flag, field_name)
    return advice
