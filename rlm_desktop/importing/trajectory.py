"""A run read from a file, in no format's terms: calls, their turns, the cells each turn ran.

Readers (`ours`, `reference`, `dspy`) fill it from their format; `to_events` turns it into the
engine events a run would have emitted. A time or a count a format does not record is None, and
`to_events` rebuilds what it must from the durations that are known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Row = dict[str, Any]


@dataclass
class Request:
    """One request a call sent to its model, as far as the file records it."""

    turn: int | None
    model: str
    content: str | None = None
    """None: the reply of its turn (or the call's response or answer)."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    sent_at: float | None = None
    latency_s: float | None = None
    finish_reason: str | None = "stop"
    truncated: bool = False
    attempts: int = 1
    error: str | None = None
    messages: int = 0


@dataclass
class Call:
    """An RLM call (with turns) or a plain LLM call, with the sub-calls its cells made."""

    id: str
    kind: str
    depth: int
    model: str
    prompt: str
    turns: list[Turn] = field(default_factory=list)
    response: str = ""
    answer: str | None = None
    answer_source: str = "FINAL"
    sources: list[Row] = field(default_factory=list)
    status: str = "ok"
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    started_at: float | None = None
    wall_s: float | None = None
    system_prompt: str | None = None
    opening: list[dict[str, str]] = field(default_factory=list)
    requests: list[Request] | None = None
    """None: one request per turn (an LLM call: one) is rebuilt from the turns."""


@dataclass
class Cell:
    """One code block a turn ran, and the sub-calls it made."""

    code: str
    stdout: str = ""
    stderr: str = ""
    error: str | None = None
    duration_s: float = 0.0
    variables: Row = field(default_factory=dict)
    timed_out: bool = False
    variables_lost: bool = False
    calls: list[Call] = field(default_factory=list)


@dataclass
class Turn:
    """A model reply and the cells it ran; `finished` False for the turn a run ended in."""

    reply: str
    cells: list[Cell] = field(default_factory=list)
    observation: str = ""
    started_at: float | None = None
    duration_s: float | None = None
    finished: bool = True


@dataclass
class Document:
    """A document the run read: its name, and its text when the file carried it."""

    name: str
    chars: int | None = None
    text: str | None = None
    type: str | None = None
    tokens: int | None = None


@dataclass
class Trajectory:
    """A whole run: its question, settings, documents, root call and how it ended."""

    source: str
    query: str
    model: str
    root: Call
    sub_model: str = ""
    mode: str = "rlm"
    chosen_mode: str | None = None
    mode_reason: str | None = None
    profile: str = ""
    settings: Row = field(default_factory=dict)
    documents: list[Document] = field(default_factory=list)
    status: str = "completed"
    answer: str = ""
    answer_kind: str = "answer"
    error: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    wall_s: float | None = None
    max_depth_reached: int | None = None
    unpriced: bool | None = None
    sandbox: str = ""
    left_out: list[str] = field(default_factory=list)

    def calls(self) -> list[Call]:
        """Every call, depth-first from the root."""
        found: list[Call] = []
        stack = [self.root]
        while stack:
            call = stack.pop()
            found.append(call)
            stack.extend(reversed(sub_calls(call)))
        return found


def sub_calls(call: Call) -> list[Call]:
    """The calls `call`'s cells made, in order."""
    return [child for turn in call.turns for cell in turn.cells for child in cell.calls]
