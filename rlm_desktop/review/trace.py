"""A call's trace, as Langfuse or Phoenix show a generation: each request it made, with the exact
messages it sent (system prompt, history, compaction summaries, the app's notes), each message's
token count, and what came back (the reply, its usage, time, finish and attempts).

Read from a saved session (`SessionDetail`), so a live run's trace is what the store has written
so far. Messages are rebuilt as `store.messages` rebuilds them; a request whose messages cannot
be (a session saved before they were recorded) says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.estimates import estimate_tokens
from rlm_desktop.store.detail import Row, SessionDetail

RULE = "─" * 8


@dataclass(frozen=True)
class SentMessage:
    """One message of a request as it was sent, with its estimated token count."""

    role: str
    content: str
    tokens: int


@dataclass(frozen=True)
class RequestTrace:
    """One request of a call: what it was for, what it sent and what came back."""

    number: int
    purpose: str
    """"turn 2", "the last answer (out of turns)" or "a call" (an LLM call's one request)."""
    messages: list[SentMessage] | None
    """None when the session does not hold them."""
    request: Row


def call_trace(detail: SessionDetail, call_id: str) -> list[RequestTrace]:
    """Every request `call_id` made, in order."""
    call = next((c for c in detail.calls if c["id"] == call_id), None)
    if call is None:
        return []
    sent = detail.messages_sent(call)
    model = str(call.get("model") or "")
    traces = []
    for number, request in enumerate(detail.requests_of(call_id), start=1):
        messages = sent.requests.get(str(request["id"]))
        if messages is None and call["kind"] == "llm" and call.get("prompt") is not None:
            messages = [{"role": "user", "content": str(call["prompt"])}]
        traces.append(
            RequestTrace(
                number=number,
                purpose=_purpose(request, sent.answer_now, str(call["kind"])),
                messages=None
                if messages is None
                else [
                    SentMessage(m["role"], m["content"], estimate_tokens(m["content"], model))
                    for m in messages
                ],
                request=request,
            )
        )
    return traces


def _purpose(request: Row, answer_now: str | None, kind: str) -> str:
    if request["id"] == answer_now:
        return "the last answer (out of turns)"
    if request.get("turn") is not None and kind == "rlm":
        return f"turn {int(request['turn']) + 1}"
    return "a call" if kind == "llm" else "a summary of the history"


def trace_text(traces: list[RequestTrace]) -> str:
    """The trace as plain text: a heading per request, then its messages and its reply."""
    if not traces:
        return "No request recorded yet."
    parts: list[str] = []
    for trace in traces:
        request = trace.request
        sent_tokens = sum(m.tokens for m in trace.messages or [])
        head = [
            f"Request {trace.number}: {trace.purpose}",
            fmt.model_name(str(request.get("model") or "")),
            f"{fmt.plural(len(trace.messages or []), 'message')} (~{sent_tokens:,} tokens)",
        ]
        if request.get("input_tokens") is not None and request.get("responded_at") is not None:
            head.append(
                f"usage {int(request['input_tokens'] or 0):,} in / "
                f"{int(request['output_tokens'] or 0):,} out"
            )
        if request.get("latency_s"):
            head.append(fmt.seconds(float(request["latency_s"])))
        if request.get("finish_reason"):
            head.append(f"finish {request['finish_reason']}")
        if int(request.get("attempts") or 1) > 1:
            head.append(f"{request['attempts']} attempts")
        parts.append(" · ".join(head))
        if trace.messages is None:
            parts.append("(the messages sent are not in this session: saved before they were kept)")
        for message in trace.messages or []:
            parts.append(f"{RULE} {message.role} (~{message.tokens:,} tokens) {RULE}")
            parts.append(message.content)
        if request.get("error"):
            parts.append(f"{RULE} failed {RULE}")
            parts.append(str(request["error"]))
        elif request.get("responded_at") is not None:
            parts.append(f"{RULE} reply {RULE}")
            parts.append(str(request.get("content") or "(empty)"))
        else:
            parts.append(f"{RULE} no reply yet {RULE}")
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"
