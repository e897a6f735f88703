"""Progress lines on stderr while a command-line run works."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TextIO

from rlm_desktop import formatting as fmt
from rlm_desktop.commands.options import SHARED_FLAGS
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.events import (
    BudgetExceeded,
    CallFinished,
    CallStarted,
    CellExecuted,
    Event,
    LLMResponded,
    LLMRetried,
    ModeChosen,
    RunFinished,
    RunStarted,
    WorkerRestarted,
)
from rlm_desktop.engine.sandbox.level import shown_level


class ProgressPrinter:
    """Prints one short line per notable event; errors and retries even when quiet.

    A cap's refusals are one line for the first and a count at the end: model code may call on
    after a cap refused it as often as it likes (each call is still refused to it and recorded).
    """

    def __init__(self, stream: TextIO, verbose: bool = True) -> None:
        self._stream = stream
        self._verbose = verbose
        self._depth: dict[str, int] = {}
        self._cells: dict[str, int] = {}
        self._kinds: dict[str, str] = {}
        self._refusals: Counter[str] = Counter()

    def attach(self, bus: EventBus) -> None:
        """Start printing the events of `bus`."""
        bus.add_listener(self.on_event)

    def on_event(self, event: Event) -> None:
        """Format and print one event, if it is worth a line (inert: reasons and errors quote
        providers and model code)."""
        if isinstance(event, RunFinished):
            for count in self._refusal_counts():
                self._print(count)
        line, important = self._describe(event)
        if line and (important or self._verbose):
            self._print(line)

    def _print(self, line: str) -> None:
        print(fmt.terminal_safe(line), file=self._stream, flush=True)

    def _refusal_counts(self) -> Iterator[str]:
        """A line per cap that refused more than the call its first line told of."""
        for limit, refused in self._refusals.items():
            if refused > 1:
                more = refused - 1
                flag = SHARED_FLAGS.get(limit, limit)
                yield f"budget: {flag} refused {more:,} more call{'s' if more > 1 else ''}"

    def _describe(self, event: Event) -> tuple[str | None, bool]:
        if isinstance(event, CallStarted):
            self._depth[event.call_id] = event.depth
            self._kinds[event.call_id] = event.kind
        indent = "  " * (self._depth.get(getattr(event, "call_id", ""), 1) - 1)
        match event:
            case RunStarted(settings={"constrained_replies": str(how)}):
                if how.startswith("none: "):
                    return f"replies not held to their shape: {how.removeprefix('none: ')}", True
                return f"replies held to prose and one code block ({how})", False
            case ModeChosen():
                return f"mode: {event.mode} ({event.reason})", False
            case CallStarted(kind="rlm"):
                return f"{indent}[{event.call_id}] RLM call on {fmt.model_name(event.model)}", False
            case LLMResponded(truncated=True):
                return f"{indent}[{event.call_id}] reply cut at the output-token limit", True
            case LLMResponded(error=None) if self._kinds.get(event.call_id) == "rlm":
                return f"{indent}[{event.call_id}] {reply_line(event)}", False
            case LLMRetried():
                return (
                    f"{indent}[{event.call_id}] retry {event.attempt} in {event.delay_s:.1f}s: {event.reason}",
                    True,
                )
            case CellExecuted():
                number = self._cells[event.call_id] = self._cells.get(event.call_id, 0) + 1
                status = "error" if event.error else "ok"
                return (
                    f"{indent}[{event.call_id}] turn {event.turn + 1} cell {number}: {status} ({event.duration_s:.2f}s)",
                    False,
                )
            case WorkerRestarted():
                return f"{indent}[{event.call_id}] REPL restarted: {event.reason}", True
            case BudgetExceeded():
                self._refusals[event.limit] += 1
                first = self._refusals[event.limit] == 1
                return (f"budget: {event.detail}", True) if first else (None, False)
            case CallFinished(status="error"):
                return f"{indent}[{event.call_id}] failed: {event.error}", True
            case RunFinished():
                cost = fmt.cost(event.cost_usd, event.unpriced, long=True)
                sandbox = fmt.sandbox_name(shown_level(event.sandbox))
                return (
                    f"{event.status}: {event.turns} turns, {event.sub_calls} sub-calls, "
                    f"{event.input_tokens + event.output_tokens:,} tokens, {cost}, {event.wall_s:.1f}s"
                    + (f", {sandbox}" if sandbox else "")
                ), event.status != "completed"
        return None, False


def reply_line(reply: LLMResponded) -> str:
    """An RLM call's reply in one line: its tokens, how fast they came, and where it was cut."""
    parts = [f"reply of {reply.output_tokens:,} tokens in {reply.latency_s:.1f}s"]
    if reply.arrivals and reply.output_tokens:
        first, last = reply.arrivals[0][0], reply.arrivals[-1][0]
        parts.append(f"first text after {first:.1f}s")
        if last > first:
            parts.append(f"{reply.output_tokens / (last - first):.0f} tokens/s")
    if reply.cut == "code":
        parts.append("read up to its code block")
    return ", ".join(parts)
