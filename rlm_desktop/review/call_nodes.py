"""The nodes of a call tree: calls, their turns and cells, subtree totals, run-level facts.

Plain data, filled in by `rlm_desktop.review.call_tree.CallTree` from engine events; no Qt.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rlm_desktop import formatting as fmt
from rlm_desktop.engine import events as ev

FINISHED_OK = "ok"


@dataclass
class Totals:
    """Sums over a node and all its descendants."""

    calls: int = 0
    running: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced: int = 0

    @property
    def tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    @property
    def cost_text(self) -> str:
        """The subtree's cost as `formatting.cost` shows it."""
        return fmt.cost(self.cost_usd, bool(self.unpriced))

    def summary(self) -> str:
        """The totals in one short line: sub-calls, tokens, cost, running and failed calls."""
        parts = [
            f"{self.calls - 1} sub" if self.calls > 1 else "",
            f"{fmt.tokens(self.tokens)} tok",
            self.cost_text,
        ]
        if self.running:
            parts.append(f"{self.running} running")
        if self.errors:
            parts.append(f"{self.errors} failed")
        return " · ".join(p for p in parts if p)


@dataclass
class Turn:
    """One turn of an RLM call: the model's reply, its cells, and what the model was shown."""

    index: int
    reply: str = ""
    cells: list[ev.CellExecuted] = field(default_factory=list)
    """The cells as the engine reported them (`index`, `code`, `stdout`, `stderr`, `error`, ...)."""
    observation: str = ""
    duration_s: float | None = None
    truncated: bool = False

    @property
    def finished(self) -> bool:
        """True once the engine reported the turn as executed."""
        return self.duration_s is not None


@dataclass(eq=False)
class CallNode:
    """One RLM call or LLM call of the tree."""

    call_id: str
    kind: str
    model: str
    prompt: str
    depth: int
    started_ts: float
    parent: CallNode | None = None
    row: int = 0
    level: int = 0
    status: str = "running"
    response: str = ""
    error: str | None = None
    ended_ts: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced: bool = False
    requests: int = 0
    retries: int = 0
    provider_wait_s: float = 0.0
    """Seconds spent waiting for the provider's replies (the call's `duration` is wall time)."""
    answer: str | None = None
    answer_source: str | None = None
    worker_restarts: int = 0
    turns: list[Turn] = field(default_factory=list)
    children: list[CallNode] = field(default_factory=list)
    subtree: Totals = field(default_factory=Totals)

    @property
    def cost_text(self) -> str:
        """The call's own cost as `formatting.cost` shows it."""
        return fmt.cost(self.cost_usd, self.unpriced)

    @property
    def requests_done(self) -> bool:
        """True once any of the call's requests came back (usage is known)."""
        return bool(self.input_tokens or self.output_tokens or self.provider_wait_s)

    @property
    def running(self) -> bool:
        """True until the call finished."""
        return self.status == "running"

    @property
    def failed(self) -> bool:
        """True when the call ended any other way than normally."""
        return not self.running and self.status != FINISHED_OK

    def duration(self, now: float | None = None) -> float:
        """Seconds from dispatch to the end, or to `now` while it runs."""
        end = self.ended_ts if self.ended_ts is not None else (now or time.time())
        return max(0.0, end - self.started_ts)

    def preview(self) -> str:
        """One line that says what the call is about or what it returned."""
        if self.running:
            text = self.prompt
        else:
            text = self.error or self.answer or self.response or self.prompt
        return " ".join(text.split())[:200]

    def ancestors(self) -> Iterator[CallNode]:
        """The parent, its parent, and so on up to the root."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def walk(self) -> Iterator[CallNode]:
        """This node and its descendants, depth first in display order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


@dataclass
class RunInfo:
    """Run-level facts gathered from the run's events."""

    run_id: str = ""
    query: str = ""
    model: str = ""
    sub_model: str = ""
    mode: str = ""
    profile: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    documents: list[dict[str, Any]] = field(default_factory=list)
    started_ts: float | None = None
    chosen_mode: str | None = None
    mode_reason: str = ""
    budget: ev.BudgetUpdated | None = None
    budget_exceeded: list[ev.BudgetExceeded] = field(default_factory=list)
    finished: ev.RunFinished | None = None
    last_ts: float | None = None
    closed: bool = False
    """True once the run is over, with or without `RunFinished` (a saved run that was cut off)."""

    def now(self) -> float:
        """The clock for running calls: the wall clock live, the last event once closed."""
        if self.closed and self.last_ts is not None:
            return self.last_ts
        return time.time()

    def elapsed(self) -> float:
        """Wall-clock seconds of the run so far (or in total once finished)."""
        if self.finished is not None:
            return self.finished.wall_s
        if self.started_ts is None:
            return 0.0
        return max(0.0, self.now() - self.started_ts)
