"""The tree of calls of one run, built from engine events, with no Qt.

`CallTree.apply(events)` folds events into nodes (one per RLM call and per LLM call, nested by
`parent_id`) and returns a `Changes` record saying which nodes were added and which changed, so a
view adapter can tell its widgets exactly what to repaint. Children lists only ever grow, and a
node's `row` is its index in its parent's list. Live runs and replays of saved runs feed the same
events through the same `apply`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from rlm_desktop import formatting as fmt
from rlm_desktop.engine import events as ev
from rlm_desktop.engine.reply_stream import CUT_AT_CODE
from rlm_desktop.review.call_nodes import FINISHED_OK, CallNode, RunInfo, Totals, Turn

__all__ = ["FINISHED_OK", "CallNode", "CallTree", "Changes", "RunInfo", "Totals", "Turn"]


@dataclass
class Changes:
    """What one `apply` did: nodes added (in order), nodes whose data changed, and more."""

    added: list[CallNode] = field(default_factory=list)
    updated: set[CallNode] = field(default_factory=set)
    turns: set[CallNode] = field(default_factory=set)
    run: bool = False


class CallTree:
    """All calls of one run, indexed by id; fold events in with `apply`."""

    def __init__(self) -> None:
        self.roots: list[CallNode] = []
        self.nodes: dict[str, CallNode] = {}
        self.run = RunInfo()
        self.sub_calls_running = 0
        self.sub_call_endings: dict[str, int] = {}
        """The ended sub-calls by how they ended (`fmt.status_tone`: "ok", "stopped", "limit",
        "error"), so a stopped or failed one is never counted as done."""
        self._held_output: dict[str, int] = {}
        """The output tokens each request in flight was sent with, by request id."""

    def __len__(self) -> int:
        return len(self.nodes)

    def children_of(self, node: CallNode | None) -> list[CallNode]:
        """The children of `node`, or the roots for `None`."""
        return self.roots if node is None else node.children

    def walk(self) -> Iterator[CallNode]:
        """Every node, depth first in display order."""
        for root in self.roots:
            yield from root.walk()

    @property
    def root(self) -> CallNode | None:
        """The first top-level call (the run's root call), if it started."""
        return self.roots[0] if self.roots else None

    @property
    def sub_calls_done(self) -> int:
        """How many sub-calls have ended, however they ended."""
        return sum(self.sub_call_endings.values())

    def apply(self, events: Iterable[ev.Event]) -> Changes:
        """Fold `events` into the tree; unknown call ids are ignored."""
        changes = Changes()
        for event in events:
            self._fold(event, changes)
            self.run.last_ts = event.ts
        return changes

    def _fold(self, event: ev.Event, changes: Changes) -> None:
        # Most frequent first: a fan-out is mostly requests, replies and call starts and ends.
        match event:
            case ev.LLMRequestSent():
                self._held_output[event.request_id] = event.reserved_output_tokens
                self._count(event.call_id, "requests", changes)
            case ev.ReplyStreamed():
                self._on_streamed(event, changes)
            case ev.LLMResponded():
                self._on_responded(event, changes)
            case ev.CallStarted():
                self._on_call_started(event, changes)
            case ev.CallFinished():
                self._on_call_finished(event, changes)
            case ev.BudgetUpdated():
                self._on_budget(event, changes)
            case ev.CellExecuted():
                self._on_cell_executed(event, changes)
            case ev.TurnStarted():
                self._on_turn_started(event, changes)
            case ev.TurnExecuted():
                self._on_turn_executed(event, changes)
            case ev.AnswerSubmitted():
                self._on_answer(event, changes)
            case ev.LLMRetried():
                self._count(event.call_id, "retries", changes)
                self.run.writing.restart(event.request_id)
                self._drop_streamed(event.call_id, changes, event)
            case ev.WorkerRestarted():
                self._count(event.call_id, "worker_restarts", changes)
            case ev.HistoryCompacted():
                self._on_compacted(event, changes)
            case ev.BudgetExceeded():
                self._on_budget_exceeded(event, changes)
            case ev.RunStarted():
                self._on_run_started(event, changes)
            case ev.ModeChosen():
                self._on_mode_chosen(event, changes)
            case ev.RunFinished():
                self._on_run_finished(event, changes)

    def close_unfinished(self, status: str = "interrupted") -> Changes:
        """End the calls still running when a saved run stops short (it was killed)."""
        changes = Changes(run=True)
        self.run.closed = True
        self._close_running(status, changes)
        return changes

    def _close_running(self, status: str, changes: Changes) -> None:
        if not any(root.subtree.running for root in self.roots):
            return
        for node in self.nodes.values():
            if node.running:
                self._end(node, status, self.run.last_ts, changes)

    def _end(self, node: CallNode, status: str, ts: float | None, changes: Changes) -> None:
        """A call ends with `status`: its open turns close and the totals above it count it done."""
        node.status, node.ended_ts = status, ts
        self._close_turns(node)
        self._propagate(node, running=-1, **node.ending_counts())
        if node.parent is not None:
            self.sub_calls_running -= 1
            tone = fmt.status_tone(status)
            self.sub_call_endings[tone] = self.sub_call_endings.get(tone, 0) + 1
        self._touch(node, changes)
        changes.turns.add(node)

    def _close_turns(self, node: CallNode) -> None:
        if not node.failed:
            return
        for turn in reversed(node.turns):
            if turn.finished:
                break
            turn.closed = node.status

    def _touch(self, node: CallNode, changes: Changes) -> None:
        changes.updated.add(node)
        changes.updated.update(node.ancestors())

    def _propagate(self, node: CallNode, **deltas: float) -> None:
        for target in (node, *node.ancestors()):
            totals = target.subtree
            for name, delta in deltas.items():
                setattr(totals, name, getattr(totals, name) + delta)

    def _on_run_started(self, e: ev.RunStarted, changes: Changes) -> None:
        self.run = RunInfo(
            run_id=e.run_id,
            query=e.query,
            model=e.model,
            sub_model=e.sub_model,
            mode=e.mode,
            profile=e.profile,
            settings=dict(e.settings),
            documents=list(e.documents),
            started_ts=e.ts,
        )
        changes.run = True

    def _on_mode_chosen(self, e: ev.ModeChosen, changes: Changes) -> None:
        self.run.chosen_mode, self.run.mode_reason = e.mode, e.reason
        changes.run = True

    def _on_call_started(self, e: ev.CallStarted, changes: Changes) -> None:
        if e.call_id in self.nodes:
            return
        parent = self.nodes.get(e.parent_id) if e.parent_id else None
        siblings = self.children_of(parent)
        node = CallNode(
            call_id=e.call_id,
            kind=e.kind,
            model=e.model,
            prompt=e.prompt,
            depth=e.depth,
            started_ts=e.ts,
            parent=parent,
            row=len(siblings),
            level=0 if parent is None else parent.level + 1,
            spawned_by=_running_cell(parent),
        )
        siblings.append(node)
        self.nodes[e.call_id] = node
        self._propagate(node, calls=1, running=1)
        if parent is not None:
            self.sub_calls_running += 1
        changes.added.append(node)
        changes.updated.update(node.ancestors())
        changes.run = True

    def _count(self, call_id: str, counter: str, changes: Changes) -> None:
        """One more request, retry or worker restart for the call (an unknown call is ignored)."""
        node = self.nodes.get(call_id)
        if node is not None:
            setattr(node, counter, getattr(node, counter) + 1)
            self._touch(node, changes)

    def _on_streamed(self, e: ev.ReplyStreamed, changes: Changes) -> None:
        self.run.writing.note(e.request_id, e.tokens, e.ts)
        node = self.nodes.get(e.call_id)
        if node is None:
            return
        if node.kind == "llm":
            node.response += e.text
            changes.updated.add(node)  # its totals are unchanged: the rows above stay as they are
        elif node.turns and not node.turns[-1].reply:
            node.turns[-1].streaming += e.text
            changes.turns.add(node)

    def _drop_streamed(self, call_id: str, changes: Changes, retried: ev.LLMRetried) -> None:
        """A request is sent again: what its failed attempt streamed is gone, and the turn
        waiting for it says why it waits longer."""
        node = self.nodes.get(call_id)
        if node is None:
            return
        if node.kind == "llm":
            node.response = ""
        elif node.turns and not node.turns[-1].reply:
            turn = node.turns[-1]
            turn.streaming = ""
            turn.retrying = (
                f"attempt {retried.attempt} failed: {fmt.one_line(retried.reason, 160)};"
                f" trying again in {fmt.seconds(retried.delay_s)}"
            )
        changes.turns.add(node)

    def _on_responded(self, e: ev.LLMResponded, changes: Changes) -> None:
        self.run.writing.done(e.request_id)
        held = self._held_output.pop(e.request_id, 0)
        node = self.nodes.get(e.call_id)
        if node is None:
            return
        cost = e.cost_usd or 0.0
        if e.cost_usd is None:
            self.run.unpriced_models.add(e.model)
        node.input_tokens += e.input_tokens
        node.output_tokens += e.output_tokens
        node.cost_usd += cost
        node.provider_wait_s += e.latency_s
        node.unpriced = node.unpriced or e.cost_usd is None
        self._propagate(
            node,
            input_tokens=e.input_tokens,
            output_tokens=e.output_tokens,
            cost_usd=cost,
            unpriced=int(e.cost_usd is None),
        )
        if node.kind == "llm":
            node.response = e.content
        elif node.turns and not node.turns[-1].reply:
            node.turns[-1].reply = e.content
            node.turns[-1].truncated = e.truncated
            if e.cut == CUT_AT_CODE:
                node.turns[-1].stopped_at_code = max(0, held - e.output_tokens)
            changes.turns.add(node)
        if e.error:
            node.error = e.error
        self._touch(node, changes)

    def _turn(self, node: CallNode, index: int) -> Turn:
        while len(node.turns) <= index:
            node.turns.append(Turn(index=len(node.turns)))
        return node.turns[index]

    def _on_turn_started(self, e: ev.TurnStarted, changes: Changes) -> None:
        node = self.nodes.get(e.call_id)
        if node is not None:
            self._turn(node, e.index)
            changes.turns.add(node)

    def _on_compacted(self, e: ev.HistoryCompacted, changes: Changes) -> None:
        node = self.nodes.get(e.call_id)
        if node is None:
            return
        self._turn(node, e.turn).compacted = (e.tokens_before, e.tokens_after)
        node.compactions += 1
        changes.turns.add(node)
        self._touch(node, changes)

    def _on_cell_executed(self, e: ev.CellExecuted, changes: Changes) -> None:
        node = self.nodes.get(e.call_id)
        if node is None:
            return
        turn = self._turn(node, e.turn)
        node.cells_run += 1
        turn.cells.append(e)
        turn.cell_numbers.append(node.cells_run)
        changes.turns.add(node)
        if e.error or e.timed_out:
            node.cell_errors += 1
            self._touch(node, changes)

    def _on_turn_executed(self, e: ev.TurnExecuted, changes: Changes) -> None:
        node = self.nodes.get(e.call_id)
        if node is None:
            return
        turn = self._turn(node, e.index)
        turn.reply, turn.observation, turn.duration_s = e.reply, e.observation, e.duration_s
        changes.turns.add(node)

    def _on_answer(self, e: ev.AnswerSubmitted, changes: Changes) -> None:
        node = self.nodes.get(e.call_id)
        if node is not None:
            node.answer, node.answer_source = e.answer, e.source
            self._touch(node, changes)
            changes.turns.add(node)

    def _on_budget(self, e: ev.BudgetUpdated, changes: Changes) -> None:
        self.run.budget = e
        changes.run = True

    def _on_budget_exceeded(self, e: ev.BudgetExceeded, changes: Changes) -> None:
        self.run.budget_exceeded.append(e)
        changes.run = True

    def _on_call_finished(self, e: ev.CallFinished, changes: Changes) -> None:
        node = self.nodes.get(e.call_id)
        if node is None or not node.running:
            return
        node.response = e.response or node.response
        node.error = e.error or node.error
        if node.requests == 0 and (e.input_tokens or e.output_tokens or e.cost_usd):
            node.input_tokens, node.output_tokens = e.input_tokens, e.output_tokens
            node.cost_usd = e.cost_usd or 0.0
            node.unpriced = e.cost_usd is None
            self._propagate(
                node,
                input_tokens=e.input_tokens,
                output_tokens=e.output_tokens,
                cost_usd=node.cost_usd,
                unpriced=int(node.unpriced),
            )
        elif not node.requests_done and node.model in self.run.unpriced_models:
            node.unpriced = True
        self._end(node, e.status, e.ts, changes)
        changes.run = True

    def _on_run_finished(self, e: ev.RunFinished, changes: Changes) -> None:
        self.run.finished = e
        self.run.closed = True
        self.run.last_ts = e.ts
        self._close_running("cancelled" if e.status == "cancelled" else "interrupted", changes)
        changes.run = True


def _running_cell(parent: CallNode | None) -> str:
    """The parent's cell that is running now, so the one that made a call starting now: the one
    after the cells already reported, in the parent's latest turn ("" without a turn)."""
    if parent is None or not parent.turns:
        return ""
    return f"cell {parent.cells_run + 1}, turn {len(parent.turns)}"
