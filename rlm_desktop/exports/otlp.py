"""Traces of a session by the OpenTelemetry GenAI semantic conventions: OTLP/JSON and protobuf.

Each RLM call is an `invoke_agent` span, each LLM request (and each plain LLM sub-call) a `chat`
span, and each REPL cell an `execute_tool` span with `gen_ai.tool.name = repl`; a sub-call is the
child of the cell that made it; code that was running when the run ended gets its span, ended with
the run. Ids are derived from the session and call ids, so exporting twice gives the same trace.
Prompt, completion and code text are included only with `include_content`: then each chat span's
`gen_ai.input.messages` is the whole message list its request sent (rebuilt by `store.messages`;
the last user message alone for a session saved before that was possible) and
`gen_ai.system_instructions` the call's system prompt.

`spans()` builds the records once; `render` writes OTLP/JSON (hex ids, as the OTLP spec asks),
`to_sdk_spans` hands them to the OpenTelemetry SDK, whose encoder and exporter write protobuf
(`otlp_send.py`). Every string of a trace (names, attributes, the JSON documents some attributes
hold, status messages) is written as every export writes text (`exports.text`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rlm_desktop.exports.otlp_events import EventRecord, answer_events
from rlm_desktop.exports.text import exported, exported_json, exported_text
from rlm_desktop.providers.registry import LITELLM_PREFIXES, provider_for_model, split_model
from rlm_desktop.store.detail import Row, SessionDetail
from rlm_desktop.store.messages import Message

if TYPE_CHECKING:
    from rlm_desktop.review.health import HealthReport

SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT = 1, 3
STATUS_UNSET, STATUS_ERROR = 0, 2
SCOPE = "rlm_desktop"
_HTTP_STATUS = re.compile(r"^HTTP (\d{3})\b")
_TYPE_NAME = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exceeded|Timeout|Interrupt)\w*):")
_STATUS_ERROR_TYPES = {"timeout": "timeout", "cancelled": "cancelled", "interrupted": "interrupted"}
# The conventions' well-known `gen_ai.provider.name` values where litellm's names differ.
_PROVIDER_NAMES = {
    "gemini": "gcp.gemini",
    "vertex_ai": "gcp.vertex_ai",
    "bedrock": "aws.bedrock",
    "azure": "azure.ai.openai",
    "azure_ai": "azure.ai.inference",
    "mistral": "mistral_ai",
    "xai": "x_ai",
    "watsonx": "ibm.watsonx.ai",
}
_DEFAULT_HOSTS = {
    "openai": ("api.openai.com", 443),
    "anthropic": ("api.anthropic.com", 443),
    "gemini": ("generativelanguage.googleapis.com", 443),
    "openrouter": ("openrouter.ai", 443),
    "ollama": ("localhost", 11434),
}

Scrub = Callable[[str], str]


@dataclass
class SpanRecord:
    """One span, in the conventions' terms; ids are hex strings, times Unix nanoseconds."""

    span_id: str
    parent_id: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    status_code: int = STATUS_UNSET
    status_message: str = ""
    events: list[EventRecord] = field(default_factory=list)


@dataclass
class TraceRecord:
    """A session's spans with the trace id and the resource's attributes."""

    trace_id: str
    resource: dict[str, Any]
    spans: list[SpanRecord]


def _id(*parts: str, length: int) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length]


def _nanos(ts: float | None) -> int:
    return int((ts or 0.0) * 1_000_000_000)


def request_model(model: str) -> str:
    """The model name the provider is sent: litellm's provider prefix taken off."""
    prefix, rest = split_model(model)
    return rest if prefix in LITELLM_PREFIXES else model


def provider_name(model: str) -> str:
    """`gen_ai.provider.name`: the conventions' value for the provider serving `model`."""
    provider = provider_for_model(model)
    return _PROVIDER_NAMES.get(provider, provider)


def server_of(api_base: str | None, model: str) -> tuple[str | None, int | None]:
    """`server.address` and `server.port`: the run's endpoint, else the provider's usual one;
    nothing for an endpoint that is no URL (a shared session's may be anything)."""
    if api_base:
        try:
            parts = urlsplit(api_base)
            port = parts.port
        except ValueError:
            return None, None
        return parts.hostname, port or (443 if parts.scheme == "https" else 80)
    return _DEFAULT_HOSTS.get(provider_for_model(model), (None, None))


def error_type(error: str, status: str | None = None) -> str:
    """`error.type` as the conventions' examples: an HTTP status (`500`), `timeout`, or the
    exception's type; `_OTHER` when none of them can be told."""
    last = error.strip().splitlines()[-1] if error.strip() else ""
    http = _HTTP_STATUS.match(error.strip()) or _HTTP_STATUS.match(last)
    if http:
        return http[1]
    if status in _STATUS_ERROR_TYPES:
        return _STATUS_ERROR_TYPES[status]
    named = _TYPE_NAME.match(last) or _TYPE_NAME.match(error.strip())
    if named:
        return named[1]
    if status == "budget_exceeded":
        return "budget_exceeded"
    return "_OTHER"


def _messages(role: str, text: str | None, finish_reason: str | None = None) -> str:
    message: dict[str, Any] = {"role": role, "parts": [{"type": "text", "content": text or ""}]}
    if finish_reason:
        message["finish_reason"] = finish_reason
    return exported_json([message])


def _input_messages(messages: list[Message]) -> str:
    """`gen_ai.input.messages`: the messages sent, in the conventions' JSON shape."""
    shaped = [
        {"role": m["role"], "parts": [{"type": "text", "content": m["content"]}]} for m in messages
    ]
    return exported_json(shaped)


def _system_instructions(call: Row, sent: list[Message] | None = None) -> str | None:
    """`gen_ai.system_instructions`: the call's system prompt as one text part (None when the
    call had none, or it was not recorded, or the request `sent` carried it in its first user
    turn, for a model without a system role)."""
    text = call.get("system_prompt")
    if text is None or (sent and sent[0]["role"] != "system"):
        return None
    return exported_json([{"type": "text", "content": text}])


class _Builder:
    def __init__(self, detail: SessionDetail, include_content: bool, scrub: Scrub) -> None:
        self.detail = detail
        self.content = include_content
        self.scrub = scrub
        session = detail.session
        self.run_end = session["ended_at"] or session["started_at"]
        self.run_status = session["status"]
        self.api_base = (session.get("settings") or {}).get("api_base")
        self.spans: list[SpanRecord] = []
        self._by_id: dict[str, SpanRecord] = {}

    def span_id(self, *key: str) -> str:
        return _id("span", self.detail.session_id, *key, length=16)

    def add(
        self,
        span_id: str,
        parent: str,
        name: str,
        kind: int,
        times: tuple[float | None, float | None],
        attributes: dict[str, Any],
        error: str | None = None,
        status: str | None = None,
    ) -> None:
        start, end = _nanos(times[0]), _nanos(times[1] if times[1] is not None else self.run_end)
        parent_span = self._by_id.get(parent)
        if parent_span is not None:
            start = max(start, parent_span.start_ns)  # no child starts before its parent
        record = SpanRecord(span_id, parent, name, kind, start, max(end, start))
        if error:
            record.status_code = STATUS_ERROR
            lines = exported_text(error).strip().splitlines()  # its own line breaks only
            record.status_message = self.scrub(lines[-1][:500] if lines else "")
            attributes["error.type"] = error_type(error, status)
        record.attributes = {
            key: self.scrub(value) if isinstance(value, str) else value
            for key, value in attributes.items()
            if value is not None
        }
        self.spans.append(record)
        self._by_id[span_id] = record

    def common(self, model: str) -> dict[str, Any]:
        address, port = server_of(self.api_base, model)
        return {
            "gen_ai.conversation.id": self.detail.session_id,
            "gen_ai.provider.name": provider_name(model),
            "gen_ai.request.model": request_model(model),
            "server.address": address,
            "server.port": port,
        }

    def call(self, call: Row, parent: str) -> None:
        span = self.span_id("call", call["id"])
        attributes = {
            "gen_ai.usage.input_tokens": call["input_tokens"] or 0,
            "gen_ai.usage.output_tokens": call["output_tokens"] or 0,
            "rlm_desktop.call_id": call["id"],
            "rlm_desktop.depth": call["depth"],
            "rlm_desktop.status": call["status"],
            "rlm_desktop.cost_usd": call["cost_usd"],
        }
        times = (call["started_at"], call["ended_at"])
        if call["kind"] == "llm":
            attributes |= self.common(call["model"]) | {"gen_ai.operation.name": "chat"}
            requests = self.detail.requests_of(call["id"])
            attributes |= self.reply_attributes(requests)
            if self.content:
                sent = self.detail.messages_sent(call).requests
                messages = sent.get(requests[-1]["id"]) if requests else None
                attributes["gen_ai.input.messages"] = (
                    _input_messages(messages) if messages else _messages("user", call["prompt"])
                )
                attributes["gen_ai.system_instructions"] = _system_instructions(call, messages)
                attributes["gen_ai.output.messages"] = _messages("assistant", call["response"])
            name = f"chat {request_model(call['model'])}"
            self.add(
                span,
                parent,
                name,
                SPAN_KIND_CLIENT,
                times,
                attributes,
                call["error"],
                call["status"],
            )
            self.children(call, span, {})
            return
        attributes |= {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "rlm",
            "gen_ai.agent.id": call["id"],
            "gen_ai.conversation.id": self.detail.session_id,
            "gen_ai.request.model": request_model(call["model"]),
            "gen_ai.provider.name": provider_name(call["model"]),
        }
        if self.content:
            attributes["gen_ai.input.messages"] = _messages("user", call["prompt"])
            attributes["gen_ai.system_instructions"] = _system_instructions(call)
            attributes["gen_ai.output.messages"] = _messages("assistant", call["answer"] or "")
        self.add(
            span,
            parent,
            "invoke_agent rlm",
            SPAN_KIND_INTERNAL,
            times,
            attributes,
            call["error"],
            call["status"],
        )
        self.turns(call, span)

    def reply_attributes(self, requests: list[Row]) -> dict[str, Any]:
        """What the last reply carried: the response model (absent on failure), the finish
        reasons (`error` for a request that failed or never came back), usage."""
        last = requests[-1] if requests else None
        answered = last is not None and last["responded_at"] is not None and not last["error"]
        recorded = last.get("finish_reason") if last else None
        reasons = [recorded] if recorded else [] if answered else ["error"]
        return {
            "gen_ai.response.model": request_model(last["model"]) if answered and last else None,
            "gen_ai.response.finish_reasons": reasons,
        }

    def turns(self, call: Row, span: str) -> None:
        turn_of = {turn["idx"]: turn for turn in self.detail.turns_of(call["id"])}
        sent = self.detail.messages_sent(call).requests if self.content else {}
        for request in self.detail.requests_of(call["id"]):
            attributes = self.common(request["model"] or call["model"]) | {
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": request["input_tokens"] or 0,
                "gen_ai.usage.output_tokens": request["output_tokens"] or 0,
                "rlm_desktop.cost_usd": request["cost_usd"],
                "rlm_desktop.turn": request["turn"],
                "rlm_desktop.attempts": request["attempts"],
            }
            ended = request["responded_at"] is not None or bool(request["error"])
            attributes |= self.reply_attributes([request])
            if self.content:
                messages = sent.get(request["id"])
                previous = turn_of.get((request["turn"] or 0) - 1)
                prompt = previous["observation"] if previous else call["prompt"]
                attributes["gen_ai.input.messages"] = (
                    _input_messages(messages) if messages else _messages("user", prompt)
                )
                attributes["gen_ai.system_instructions"] = _system_instructions(call, messages)
                attributes["gen_ai.output.messages"] = _messages(
                    "assistant", request["content"], request["finish_reason"]
                )
            error = request["error"] or (None if ended else f"the run ended: {self.run_status}")
            self.add(
                self.span_id("request", request["id"]),
                span,
                f"chat {request_model(request['model'] or call['model'])}",
                SPAN_KIND_CLIENT,
                (request["sent_at"], request["responded_at"]),
                attributes,
                error,
                None if ended else self.run_status,
            )
        cell_spans: dict[tuple[int | None, int | None], str] = {}
        for turn in self.detail.turns_of(call["id"]):
            cells = self.detail.cells_of(call["id"], turn["idx"])
            for cell in cells:
                cell_span = self.span_id("cell", call["id"], str(turn["idx"]), str(cell["idx"]))
                cell_spans[(turn["idx"], cell["idx"])] = cell_span
                end = cell["ended_at"]
                start = end - (cell["duration_s"] or 0.0) if end is not None else None
                self.cell(call, turn["idx"], cell["idx"], span, cell_span, (start, end), cell)
            self.unfinished_cells(call, turn, span, cell_spans, len(cells))
        self.children(call, span, cell_spans)

    def unfinished_cells(
        self,
        call: Row,
        turn: Row,
        parent: str,
        cell_spans: dict[tuple[int | None, int | None], str],
        ran: int,
    ) -> None:
        """Spans for the code of the turn the run ended in: the first block was running."""
        replied = [
            r["responded_at"]
            for r in self.detail.requests_of(call["id"])
            if r.get("turn") == turn["idx"] and r["responded_at"]
        ]
        start = replied[-1] if replied else turn.get("started_at")
        for offset, code in enumerate(self.detail.unfinished_code(call["id"], turn)):
            index = ran + offset
            span = self.span_id("cell", call["id"], str(turn["idx"]), str(index))
            cell_spans[(turn["idx"], index)] = span
            row = {"code": code, "stdout": "", "stderr": "", "timed_out": 0}
            reason = f"the run ended ({self.run_status}) before this code finished"
            self.cell(call, turn["idx"], index, parent, span, (start, None), row, reason)
            start = self.run_end

    def cell(
        self,
        call: Row,
        turn: int,
        index: int,
        parent: str,
        span: str,
        times: tuple[float | None, float | None],
        cell: Row,
        unfinished: str | None = None,
    ) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "repl",
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": f"{call['id']}:{turn}:{index}",
            "gen_ai.conversation.id": self.detail.session_id,
            "rlm_desktop.call_id": call["id"],
            "rlm_desktop.turn": turn,
            "rlm_desktop.cell": index,
            "rlm_desktop.timed_out": bool(cell["timed_out"]),
            "rlm_desktop.unfinished": True if unfinished else None,
        }
        if self.content:
            attributes["gen_ai.tool.call.arguments"] = exported_json({"code": cell["code"]})
            attributes["gen_ai.tool.call.result"] = (cell["stdout"] or "") + (cell["stderr"] or "")
        error = unfinished or cell.get("error")
        status = self.run_status if unfinished else None
        self.add(
            span, parent, "execute_tool repl", SPAN_KIND_INTERNAL, times, attributes, error, status
        )

    def answer_events(self, root: Row, health: HealthReport | None) -> None:
        """The answer's sources and what was read to answer, on the span of the call that
        submitted the answer, at its end."""
        span = self._by_id[self.span_id("call", root["id"])]
        for event in answer_events(health, span.end_ns, self.content):
            event.attributes = {
                key: self.scrub(value) if isinstance(value, str) else value
                for key, value in event.attributes.items()
            }
            span.events.append(event)

    def children(
        self, call: Row, span: str, cells: dict[tuple[int | None, int | None], str]
    ) -> None:
        for child in self.detail.children(call["id"]):
            self.call(child, cells.get((child["parent_turn"], child["parent_cell"]), span))


def spans(
    detail: SessionDetail,
    include_content: bool = False,
    scrub: Scrub = str,
    health: HealthReport | None = None,
) -> TraceRecord:
    """The session's trace: every span, in parent-before-child order; with `health`, the root
    span (the call that submitted the answer) carries the answer's sources and the passages
    read to answer it as events (`otlp_events`)."""
    builder = _Builder(detail, include_content, scrub)
    for root in detail.roots():
        builder.call(root, "")
    if detail.roots():
        builder.answer_events(detail.roots()[0], health)
    resource = {
        "service.name": "rlm-desktop",
        "rlm_desktop.session_id": detail.session_id,
        "rlm_desktop.query": scrub(detail.session["query"]) if include_content else None,
    }
    return _exported(
        TraceRecord(
            trace_id=_id("trace", detail.session_id, length=32),
            resource={key: value for key, value in resource.items() if value is not None},
            spans=builder.spans,
        )
    )


def _exported(trace: TraceRecord) -> TraceRecord:
    """`trace` with every string of it as every export writes text (`exports.text`)."""
    trace.resource = exported(trace.resource)
    for span in trace.spans:
        span.name = exported_text(span.name)
        span.status_message = exported_text(span.status_message)
        span.attributes = exported(span.attributes)
        for event in span.events:
            event.name = exported_text(event.name)
            event.attributes = exported(event.attributes)
    return trace


def _json_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_json_value(item) for item in value]}}
    return {"stringValue": str(value)}


def _json_attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _json_value(value)} for key, value in values.items()]


def _json_span(trace_id: str, span: SpanRecord) -> dict[str, Any]:
    status: dict[str, Any] = {"code": span.status_code}
    if span.status_message:
        status["message"] = span.status_message
    events = [
        {
            "timeUnixNano": str(event.time_ns),
            "name": event.name,
            "attributes": _json_attributes(event.attributes),
        }
        for event in span.events
    ]
    return {
        "traceId": trace_id,
        "spanId": span.span_id,
        "parentSpanId": span.parent_id,
        "name": span.name,
        "kind": span.kind,
        "startTimeUnixNano": str(span.start_ns),
        "endTimeUnixNano": str(span.end_ns),
        "attributes": _json_attributes(span.attributes),
        **({"events": events} if events else {}),
        "status": status,
    }


def render(
    detail: SessionDetail,
    include_content: bool = False,
    health: HealthReport | None = None,
    scrub: Scrub = str,
) -> str:
    """The session as one OTLP/JSON `ExportTraceServiceRequest` document (with `health`, the
    answer's sources as events of the root span)."""
    trace = spans(detail, include_content, scrub, health)
    document = {
        "resourceSpans": [
            {
                "resource": {"attributes": _json_attributes(trace.resource)},
                "scopeSpans": [
                    {
                        "scope": {"name": SCOPE},
                        "spans": [_json_span(trace.trace_id, span) for span in trace.spans],
                    }
                ],
            }
        ]
    }
    return json.dumps(document, ensure_ascii=False) + "\n"
