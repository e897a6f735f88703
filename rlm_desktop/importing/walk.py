"""The `RLMLogger` shape walked into calls: iterations into turns, code blocks into cells, each
block's `rlm_calls` into sub-calls, a recursive call's `metadata.iterations` into its own turns.

Both the reference's own log and our JSONL export (which is in its shape, with keys of our own
beside the reference's) are walked here; our keys are read where present.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from rlm_desktop.importing.reading import Entry, as_text
from rlm_desktop.importing.trajectory import Call, Cell, Turn

CALL_STATUSES = frozenset(
    {"ok", "error", "cancelled", "budget_exceeded", "max_turns", "timeout", "interrupted"}
)
_CONTEXT_NAMES = re.compile(r"context(_\d+)?|answer|f")
_RAISED = re.compile(r"\n([A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b[^\n]*)$")
_SHORT = 1000
_MAX_VARIABLES = 100


class Walker:
    """Walks one file's calls, giving each an id (the file's, checked, or a new one)."""

    def __init__(self, backend: str, reference: bool) -> None:
        self._backend = backend
        self._reference = reference
        self._taken: set[str] = set()
        self._next = 0
        self.calls: dict[str, tuple[Call, str | None]] = {}
        """Every call walked, with its parent's id."""

    def new_call(
        self, entry: Entry, kind: str, depth: int, model: str, prompt: str, parent: str | None
    ) -> Call:
        """A call for `entry`, under its own id when it names one (each id only once)."""
        given = entry.call_id()
        if given is None:
            self._next += 1
            while f"c{self._next}" in self._taken:
                self._next += 1
            given = f"c{self._next}"
        elif given in self._taken:
            raise entry.fail(f"names call {given!r} a second time: call ids must be unique")
        self._taken.add(given)
        call = Call(id=given, kind=kind, depth=depth, model=model, prompt=prompt)
        self.calls[given] = (call, parent)
        return call

    def model_name(self, name: str) -> str:
        """A model named in the file, as a litellm model string (`openai/test-model`)."""
        if not name or "/" in name or not self._backend:
            return name
        return f"{self._backend}/{name}"

    def turns(self, call: Call, iterations: list[Entry]) -> None:
        """Fill `call`'s turns (and its answer) from its iteration entries."""
        previous: list[dict[str, str]] | None = None
        for entry in iterations:
            messages = _messages(entry)
            if previous is None:
                call.system_prompt, call.opening = _opening(messages)
            elif call.turns and not call.turns[-1].observation:
                call.turns[-1].observation = _new_user_text(previous, messages)
            previous = messages
            blocks = [block for block in entry.items("code_blocks") if not block.flag("unfinished")]
            final = entry.optional_text("final_answer")
            if not blocks and final is not None and call.turns and _asked_for_answer(entry):
                call.answer, call.answer_source = final, "partial"  # out of turns: asked for it
                continue
            turn = Turn(
                reply=entry.text("response"),
                observation=entry.text("observation"),
                duration_s=entry.number("iteration_time"),
                started_at=_started(entry),
                finished=entry.get("finished") is not False,
            )
            turn.cells = [self._cell(block, call) for block in blocks]
            call.turns.append(turn)
            if final is not None:
                call.answer = final
                call.answer_source = "answer" if blocks else "direct"

    def _cell(self, block: Entry, call: Call) -> Cell:
        result = block.child("result") or Entry(block.line, {})
        stderr, error = result.text("stderr"), block.optional_text("error")
        if error is not None and stderr.endswith(error):
            stderr = stderr[: len(stderr) - len(error)]
        elif error is None and self._reference:
            raised = _RAISED.search(stderr)
            if raised is not None:
                stderr, error = stderr[: raised.start()], raised.group(1)
        cell = Cell(
            code=block.text("code"),
            stdout=result.text("stdout"),
            stderr=stderr,
            error=error,
            duration_s=result.number("execution_time") or 0.0,
            variables=_variables(result.child("locals"), self._reference),
            timed_out=block.flag("timed_out"),
            variables_lost=block.flag("variables_lost"),
        )
        cell.calls = [self.sub_call(entry, call) for entry in result.items("rlm_calls")]
        return cell

    def sub_call(self, entry: Entry, parent: Call) -> Call:
        """A sub-call entry (the reference's `RLMChatCompletion.to_dict()`) as a call."""
        metadata = entry.child("metadata")
        iterations = metadata.items("iterations") if metadata is not None else []
        kind = entry.text("kind") or ("rlm" if iterations else "llm")
        if kind not in ("rlm", "llm"):
            raise entry.fail(f"its 'kind' is {kind!r}: a call is 'rlm' or 'llm'")
        call = self.new_call(
            entry, kind, parent.depth + 1, self.model_name(entry.text("root_model")),
            as_text(entry.get("prompt") or ""), parent.id,
        )  # fmt: skip
        call.response = entry.text("response")
        call.error = entry.optional_text("error")
        call.wall_s = entry.number("execution_time")
        _usage(call, entry)
        if kind == "rlm":
            self.turns(call, iterations)
            if call.turns or call.answer is not None:
                own = [c for t in call.turns for cell in t.cells for c in cell.calls]
                _less_sub_calls(call, [c for c in own if c.kind == "llm"])
        failed = call.error is not None or (call.response.startswith("Error: ") and not iterations)
        status = entry.text("status") or ("error" if failed else _ending(call))
        if status not in CALL_STATUSES:
            raise entry.fail(f"its 'status' is {status!r}, not a call status")
        call.status = status
        if status != "ok" and call.error is None and call.response.startswith("Error: "):
            call.error = call.response[len("Error: ") :]
        return call


def _ending(call: Call) -> str:
    if call.kind == "llm" or call.answer_source != "partial" and call.answer is not None:
        return "ok"
    return "max_turns" if call.answer is not None else "error"


def _usage(call: Call, entry: Entry) -> None:
    """A sub-call's tokens and cost: ours where written, else the reference's usage summary."""
    summary = entry.child("usage_summary")
    models = summary.child("model_usage_summaries") if summary is not None else None
    costs: list[float] = []
    for name in models.data if models is not None else {}:
        usage = models.child(name) if models is not None else None
        if usage is None:
            continue
        call.input_tokens += usage.count("total_input_tokens")
        call.output_tokens += usage.count("total_output_tokens")
        cost = usage.number("total_cost")
        if cost is not None:
            costs.append(cost)
    if entry.has("prompt_tokens") or entry.has("completion_tokens"):
        call.input_tokens = entry.count("prompt_tokens")
        call.output_tokens = entry.count("completion_tokens")
    call.cost_usd = (
        entry.number("cost_usd") if entry.has("cost_usd") else (sum(costs) if costs else None)
    )


def _less_sub_calls(call: Call, llm_calls: list[Call]) -> None:
    """The reference counts a recursive call's `llm_query` sub-calls in its own usage: keep its
    own (our export's calls carry their own already and are left as they are)."""
    if not llm_calls:
        return
    call.input_tokens = max(call.input_tokens - sum(c.input_tokens for c in llm_calls), 0)
    call.output_tokens = max(call.output_tokens - sum(c.output_tokens for c in llm_calls), 0)
    costs = [c.cost_usd for c in llm_calls if c.cost_usd is not None]
    if call.cost_usd is not None and costs:
        call.cost_usd = max(call.cost_usd - sum(costs), 0.0)


def _messages(entry: Entry) -> list[dict[str, str]]:
    prompt = entry.get("prompt")
    if isinstance(prompt, str) or prompt is None:
        return [{"role": "user", "content": prompt or ""}]
    if not isinstance(prompt, list):
        raise entry.fail("its 'prompt' is neither text nor a list of messages")
    messages = []
    for item in prompt:
        message = Entry(entry.line, item)
        if not isinstance(item, dict):
            raise entry.fail("its 'prompt' lists something that is not a message")
        messages.append({"role": message.text("role", "user"), "content": as_text(
            message.get("content") or "")})  # fmt: skip
    return messages


def _opening(messages: list[dict[str, str]]) -> tuple[str | None, list[dict[str, str]]]:
    if messages and messages[0]["role"] == "system":
        return messages[0]["content"], messages[1:]
    return None, messages


def _new_user_text(previous: list[dict[str, str]], messages: list[dict[str, str]]) -> str:
    """What a turn showed the model next: the messages the next request added after the reply."""
    added = messages[len(previous) + 1 :] if len(messages) > len(previous) else []
    return "\n\n".join(m["content"] for m in added if m["role"] == "user")


def _asked_for_answer(entry: Entry) -> bool:
    """The reference's `_default_answer`: out of iterations, the model asked for its answer by
    an assistant message ending the prompt; ours marks it `answer_now`."""
    if entry.flag("answer_now"):
        return True
    prompt = entry.get("prompt")
    return (
        isinstance(prompt, list)
        and bool(prompt)
        and isinstance(prompt[-1], dict)
        and (prompt[-1].get("role") == "assistant")
    )


def _started(entry: Entry) -> float | None:
    """When an iteration began: ours says; the reference logs its end (local time, no zone)."""
    started = entry.number("started_at")
    if started is not None:
        return started
    stamp = entry.optional_text("timestamp")
    if stamp is None:
        return None
    try:
        ended = datetime.fromisoformat(stamp).timestamp()
    except (ValueError, OverflowError, OSError):
        raise entry.fail(f"its 'timestamp' {stamp[:40]!r} is not an ISO 8601 time") from None
    return max(ended - (entry.number("iteration_time") or 0.0), 0.0)


def _variables(locals_entry: Entry | None, reference: bool) -> dict[str, object]:
    """The model's variables as short values (the reference logs them whole, with its own
    scaffolding: the contexts, `answer` and `f`, left out as ours are)."""
    if locals_entry is None:
        return {}
    shown: dict[str, object] = {}
    for name, value in locals_entry.data.items():
        if reference and _CONTEXT_NAMES.fullmatch(name) or len(shown) >= _MAX_VARIABLES:
            continue
        if isinstance(value, list | dict):
            value = json.dumps(value, ensure_ascii=False)
        shown[name[:_SHORT]] = value[:_SHORT] if isinstance(value, str) else value
    return shown
