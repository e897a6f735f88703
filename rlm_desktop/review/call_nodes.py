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
from rlm_desktop.review.writing_rate import WritingRate

FINISHED_OK = "ok"


@dataclass
class Totals:
    """Sums over a node and all its descendants."""

    calls: int = 0
    running: int = 0
    errors: int = 0
    """Calls that failed (an error)."""
    stopped: int = 0
    """Calls cut short by the user, a limit or the end of the run."""
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
        if self.stopped:
            parts.append(f"{self.stopped} stopped")
        return " · ".join(p for p in parts if p)


@dataclass
class Turn:
    """One turn of an RLM call: the model's reply, its cells, and what the model was shown."""

    index: int
    reply: str = ""
    cells: list[ev.CellExecuted] = field(default_factory=list)
    """The cells as the engine reported them (`index`, `code`, `stdout`, `stderr`, `error`, ...)."""
    cell_numbers: list[int] = field(default_factory=list)
    """Each cell's number within its call, as the worker names it in tracebacks (`<cell 3>`)."""
    observation: str = ""
    duration_s: float | None = None
    truncated: bool = False
    closed: str | None = None
    """The call's status when the call ended before this turn finished (None otherwise)."""
    compacted: tuple[int, int] | None = None
    """(tokens before, tokens after) when the call's history was compacted before this turn."""
    streaming: str = ""
    """The reply as it has streamed in so far, until the whole of it is known (`reply`)."""
    stopped_at_code: int | None = None
    """When the app stopped reading the reply at its first code block: how many more tokens its
    output cap would have let the model write (the most the stop saved), else None."""
    retrying: str = ""
    """Why the turn's request is being sent again, while it is ("" otherwise)."""

    @property
    def finished(self) -> bool:
        """True once the engine reported the turn as executed."""
        return self.duration_s is not None

    @property
    def cell_errors(self) -> int:
        """How many of the turn's cells raised an exception or ran out of time."""
        return sum(1 for cell in self.cells if cell.error or cell.timed_out)

    def summary(self) -> str:
        """The turn's cells, errors, duration and how its reply ended, in one line."""
        running = self.closed is None and not self.finished and bool(self.reply)
        meta = [fmt.plural(len(self.cells), "cell")] if self.cells or not running else []
        if running:
            meta.append("more code running" if self.cells else "its code running")
        if self.compacted is not None:
            before, after = self.compacted
            meta.insert(0, f"history compacted first: {before:,} → {after:,} tokens")
        if self.cell_errors:
            meta.append(f"{self.cell_errors} raised")
        if self.finished:
            meta.append(fmt.seconds(self.duration_s))
        elif self.closed:
            meta.append(fmt.status_text(self.closed))
        if self.truncated:
            meta.append("reply cut at the output-token limit")
        if self.stopped_at_code is not None:
            meta.append(
                f"stopped at its code (up to {self.stopped_at_code:,} more tokens not waited for)"
            )
        return " · ".join(meta)

    def progress(self, error: str | None = None) -> str:
        """What an unfinished turn is doing, or how it was cut short (`error` is the call's)."""
        if self.closed is None:
            if self.reply:
                return "running code…"
            if self.streaming:
                return "the model is writing…"
            waiting = "waiting for the model…"
            return f"{waiting} ({self.retrying})" if self.retrying else waiting
        verb = "Failed" if fmt.status_tone(self.closed) == "error" else "Stopped"
        where = "while its code ran" if self.reply else "before the model replied"
        why = fmt.one_line(error, 300) if error else fmt.status_text(self.closed)
        return f"{verb} {where}: {why}"


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
    compactions: int = 0
    cells_run: int = 0
    cell_errors: int = 0
    spawned_by: str = ""
    """The parent's cell whose code made this call ("cell 3, turn 2"), "" for the root."""
    """Cells of this call that raised an exception or ran out of time."""
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

    def ending_counts(self) -> dict[str, float]:
        """This call's share of its subtree's failed and stopped calls, once it ended."""
        if not self.failed:
            return {}
        if fmt.status_tone(self.status) == "error":
            return {"errors": 1}
        return {"stopped": 1}

    @property
    def needs_attention(self) -> bool:
        """True for a call that failed or whose code raised: where "next error" stops."""
        return self.failed or self.cell_errors > 0

    def about(self, limit: int = 80) -> str:
        """The start of the prompt, on one line: what the call was asked."""
        return fmt.one_line(self.prompt, limit)

    def result(self) -> str:
        """One line of what the call returned, or why it failed ("" while it runs)."""
        if self.running:
            return ""
        return fmt.one_line(self.error or self.answer or self.response, 200)

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
    unpriced_models: set[str] = field(default_factory=set)
    """Models whose replies came without a price."""
    finished: ev.RunFinished | None = None
    writing: WritingRate = field(default_factory=WritingRate)
    """How fast the replies streaming now are being written."""
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
