"""Progress lines on stderr while a command-line run works."""

from __future__ import annotations

from typing import TextIO

from rlm_desktop import formatting as fmt
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
    WorkerRestarted,
)


class ProgressPrinter:
    """Prints one short line per notable event; errors and retries even when quiet."""

    def __init__(self, stream: TextIO, verbose: bool = True) -> None:
        self._stream = stream
        self._verbose = verbose
        self._depth: dict[str, int] = {}
        self._cells: dict[str, int] = {}

    def attach(self, bus: EventBus) -> None:
        """Start printing the events of `bus`."""
        bus.add_listener(self.on_event)

    def on_event(self, event: Event) -> None:
        """Format and print one event, if it is worth a line (inert: reasons and errors quote
        providers and model code)."""
        line, important = self._describe(event)
        if line and (important or self._verbose):
            print(fmt.terminal_safe(line), file=self._stream, flush=True)

    def _describe(self, event: Event) -> tuple[str | None, bool]:
        if isinstance(event, CallStarted):
            self._depth[event.call_id] = event.depth
        indent = "  " * (self._depth.get(getattr(event, "call_id", ""), 1) - 1)
        match event:
            case ModeChosen():
                return f"mode: {event.mode} ({event.reason})", False
            case CallStarted(kind="rlm"):
                return f"{indent}[{event.call_id}] RLM call on {fmt.model_name(event.model)}", False
            case LLMResponded(truncated=True):
                return f"{indent}[{event.call_id}] reply cut at the output-token limit", True
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
                return f"budget: {event.detail}", True
            case CallFinished(status="error"):
                return f"{indent}[{event.call_id}] failed: {event.error}", True
            case RunFinished():
                cost = fmt.cost(event.cost_usd, event.unpriced, long=True)
                return (
                    f"{event.status}: {event.turns} turns, {event.sub_calls} sub-calls, "
                    f"{event.input_tokens + event.output_tokens:,} tokens, {cost}, {event.wall_s:.1f}s"
                ), event.status != "completed"
        return None, False
