"""Everything the engine does, as small immutable messages named for what happened.

Every event carries the `run_id`; call-level events carry `call_id` (and `parent_id` where a tree
edge is made). `ts` is the wall-clock time (seconds since the epoch) at which it happened. The store
and the UI learn about a run only through these; a saved run is replayed as the same events.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

CallKind = Literal["rlm", "llm"]
RunStatus = Literal["completed", "max_turns", "budget_exceeded", "timeout", "cancelled", "error"]
CallStatus = Literal[
    "running", "ok", "error", "cancelled", "budget_exceeded", "max_turns", "timeout"
]
AnswerSource = Literal["FINAL", "FINAL_VAR", "answer", "direct", "partial"]
AnswerKind = Literal["answer", "draft", "last_reply", "none"]
"""What a run's `answer` text is: the model's answer, or for a run that ended without one its
`answer["content"]` draft, its last reply (cut off, or written when told to answer now), or nothing."""


def _now() -> float:
    return time.time()


@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of all engine events."""

    run_id: str
    ts: float = field(default_factory=_now)
    stored: ClassVar[bool] = True
    """False for events shown live and never written to the session's log."""


@dataclass(frozen=True, kw_only=True)
class RunStarted(Event):
    """A run began. `settings` is the run configuration without secrets, and whether its requests
    sent a system message (`system_role`, the profile's: `message_roles`)."""

    query: str
    mode: str
    model: str
    sub_model: str
    profile: str
    settings: dict[str, Any]
    documents: list[dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class ModeChosen(Event):
    """`auto` mode decided between a direct call and an RLM run."""

    mode: Literal["direct", "rlm"]
    reason: str


@dataclass(frozen=True, kw_only=True)
class CallStarted(Event):
    """An RLM call (with its own REPL) or a plain LLM call was dispatched."""

    call_id: str
    parent_id: str | None
    kind: CallKind
    depth: int
    model: str
    prompt: str


@dataclass(frozen=True, kw_only=True)
class CallOpened(Event):
    """A call's conversation began: its system prompt and the user message(s) that open it,
    exactly as its first request sends them (the later requests add turns to these). An LLM
    call's `opening` is empty: its one user message is its `prompt` (`CallStarted`).

    The store keeps each distinct `system_prompt` once (it is the same for most calls of a run).
    """

    call_id: str
    system_prompt: str
    opening: list[dict[str, str]]


@dataclass(frozen=True, kw_only=True)
class LLMRequestSent(Event):
    """One request left for the provider (a turn of an RLM call, or an LLM sub-call)."""

    call_id: str
    request_id: str
    model: str
    messages: int
    """How many messages the conversation held as the engine built it (what was sent is derived
    from them: `message_roles`)."""
    reserved_tokens: int
    """Input plus output tokens the request holds until it settles."""
    reserved_output_tokens: int = 0
    reserved_cost_usd: float | None = None
    """What the hold costs (None for a model without a price): what the request is charged if
    the app is stopped before it settles."""


@dataclass(frozen=True, kw_only=True)
class LLMRetried(Event):
    """A request failed with a retryable error and will be sent again after `delay_s`."""

    call_id: str
    request_id: str
    attempt: int
    delay_s: float
    reason: str


@dataclass(frozen=True, kw_only=True)
class LLMResponded(Event):
    """A request came back, successfully or not. `cost_usd` is None for unpriced models."""

    call_id: str
    request_id: str
    model: str
    content: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_s: float
    finish_reason: str | None
    truncated: bool
    attempts: int
    error: str | None = None
    stopped_early: str | None = None
    """Why the app cut the reply or capped its counts (the provider passed its max_tokens)."""
    cut: str | None = None
    """Why the app stopped reading the reply early: `code` (its first code block was complete,
    so what the model wrote after it was not waited for) or `max_tokens`; None when it ended."""
    arrivals: list[list[float]] = field(default_factory=list)
    """[seconds after sending, characters so far] as the reply streamed in, at most 120 points:
    what replay shows the reply's growth by."""


@dataclass(frozen=True, kw_only=True)
class ReplyStreamed(Event):
    """More of a request's reply arrived: `text` is what came since the request's last such
    event, `characters` the reply's length so far, `tokens` its tokens so far (the app's own
    count, as the output cap is held). Shown live, never stored: a saved reply keeps its arrival
    in `LLMResponded.arrivals`, and replay makes these events again from it."""

    call_id: str
    request_id: str
    text: str
    characters: int
    tokens: int = 0
    stored: ClassVar[bool] = False


@dataclass(frozen=True, kw_only=True)
class TurnStarted(Event):
    """An RLM call began turn `index` (0-based): a model reply followed by its code cells."""

    call_id: str
    index: int


@dataclass(frozen=True, kw_only=True)
class CellExecuted(Event):
    """One code block ran in the call's REPL worker.

    `stdout`/`stderr` are kept up to the store's cap; `observation` is what the model was shown
    (truncated head and tail). `error` is the formatted traceback when the cell raised.
    """

    call_id: str
    turn: int
    index: int
    code: str
    stdout: str
    stderr: str
    error: str | None
    duration_s: float
    timed_out: bool = False
    variables_lost: bool = False
    variables: dict[str, Any] = field(default_factory=dict)
    """The model's variables after the cell, each as a short value or repr (bounded; never the
    contexts, tools, modules or imported functions)."""


@dataclass(frozen=True, kw_only=True)
class TurnExecuted(Event):
    """Turn `index` finished: the model's prose, its code blocks and what it was shown next."""

    call_id: str
    index: int
    reply: str
    code_blocks: int
    observation: str
    duration_s: float


@dataclass(frozen=True, kw_only=True)
class WorkerRestarted(Event):
    """A call's REPL worker was killed and started again with the context (variables lost)."""

    call_id: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class HistoryCompacted(Event):
    """Before turn `turn`, the call's older turns were replaced by the model's `summary`; the
    conversation went from `tokens_before` to `tokens_after` (estimated input tokens)."""

    call_id: str
    turn: int
    tokens_before: int
    tokens_after: int
    summary: str


@dataclass(frozen=True, kw_only=True)
class AnswerSubmitted(Event):
    """A call submitted its answer through an executed signal (or a direct reply)."""

    call_id: str
    answer: str
    source: AnswerSource
    sources: list[dict[str, Any]] = field(default_factory=list)
    """The passages the model said the answer rests on, as it gave them (`GivenSource.to_json`:
    a `quote`, or a `document_index`, `start` and `end`); `review.health.sources` checks them."""


@dataclass(frozen=True, kw_only=True)
class BudgetUpdated(Event):
    """The tree-wide ledger changed. Totals include reservations for calls in flight."""

    cost_usd: float
    tokens: int
    sub_calls: int
    in_flight: int
    unpriced_calls: int


@dataclass(frozen=True, kw_only=True)
class BudgetExceeded(Event):
    """A call was refused because it could exceed the cap named by `limit`."""

    call_id: str | None
    limit: str
    detail: str


@dataclass(frozen=True, kw_only=True)
class CallFinished(Event):
    """A call ended. `response` is the LLM call's reply or the RLM call's answer."""

    call_id: str
    status: CallStatus
    response: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class RunTotals:
    """How a run ended, with totals over the whole tree (`RunFinished` and `RunResult` carry them).

    `http_status` is the provider's HTTP status when the run failed on a provider error (401 and
    403 mean the API key was refused), so that a caller can add advice in its own words.
    """

    status: RunStatus
    answer: str
    cost_usd: float
    input_tokens: int
    output_tokens: int
    turns: int
    sub_calls: int
    max_depth_reached: int
    wall_s: float
    unpriced: bool
    error: str | None = None
    http_status: int | None = None
    sandbox: str = ""
    """The kernel sandbox level model code ran under (`landlock+netns+pidns`, `landlock`,
    `process-only`, ...), or `unused` when the run started no REPL."""
    refused_calls: int = 0
    """Calls a budget cap refused; with any, a run the model still answered is `budget_exceeded`."""
    held_tokens: int = 0
    """Of `input_tokens` + `output_tokens`, those counted at what a request held because it was
    stopped in flight (its reply never read): the provider may have billed them, nothing
    reported them."""
    answer_kind: AnswerKind = "answer"
    """What `answer` holds; anything but `answer` is no answer and must not be shown as one."""
    warnings: list[str] = field(default_factory=list)
    """What went wrong besides the run itself, one line each: above all a session that could
    not be saved in full (the recorder's `warnings`, added by whoever closed it)."""


@dataclass(frozen=True, kw_only=True)
class RunFinished(Event, RunTotals):
    """The run ended with `status`; the totals cover the whole tree."""


EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (
        RunStarted,
        ModeChosen,
        CallStarted,
        CallOpened,
        LLMRequestSent,
        LLMRetried,
        LLMResponded,
        ReplyStreamed,
        TurnStarted,
        CellExecuted,
        TurnExecuted,
        WorkerRestarted,
        HistoryCompacted,
        AnswerSubmitted,
        BudgetUpdated,
        BudgetExceeded,
        CallFinished,
        RunFinished,
    )
}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from its fields and its class name under `type` (used by replay)."""
    fields = dict(data)
    cls = EVENT_TYPES[fields.pop("type")]
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in fields.items() if k in names})
