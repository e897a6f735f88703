"""OTLP/JSON traces following the OpenTelemetry GenAI semantic conventions.

Each RLM call is an `invoke_agent` span, each LLM request (and each plain LLM sub-call) a `chat`
span, and each REPL cell an `execute_tool` span with `gen_ai.tool.name = repl`; a sub-call is the
child of the cell that made it. Ids are derived from the session and call ids, so exporting twice
gives the same trace. Prompt, completion and code text are included only with `include_content`.
The file can be posted to an OTLP/HTTP collector (`/v1/traces`, JSON) such as Langfuse or Phoenix.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from rlm_desktop.providers.registry import provider_for_model
from rlm_desktop.store.detail import Row, SessionDetail

SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT = 1, 3
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
_OK = {"ok", "completed"}


def _id(*parts: str, length: int) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length]


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_value(item) for item in value]}}
    return {"stringValue": str(value)}


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"key": key, "value": _value(value)} for key, value in values.items() if value is not None
    ]


def _nanos(ts: float | None) -> str:
    return str(int((ts or 0.0) * 1_000_000_000))


def _messages(role: str, text: str | None, finish_reason: str | None = None) -> str:
    message: dict[str, Any] = {"role": role, "parts": [{"type": "text", "content": text or ""}]}
    if finish_reason:
        message["finish_reason"] = finish_reason
    return json.dumps([message], ensure_ascii=False)


class _Builder:
    def __init__(self, detail: SessionDetail, include_content: bool) -> None:
        self.detail = detail
        self.content = include_content
        self.trace_id = _id("trace", detail.session_id, length=32)
        self.end_default = detail.session["ended_at"] or detail.session["started_at"]
        self.spans: list[dict[str, Any]] = []

    def span_id(self, *key: str) -> str:
        return _id("span", self.detail.session_id, *key, length=16)

    def add(
        self,
        span_id: str,
        parent: str,
        name: str,
        kind: int,
        start: float | None,
        end: float | None,
        attributes: dict[str, Any],
        error: str | None,
        status: str | None,
    ) -> None:
        code = STATUS_ERROR if error else STATUS_OK if status in _OK else STATUS_UNSET
        span_status: dict[str, Any] = {"code": code}
        if error:
            span_status["message"] = error.strip().splitlines()[-1][:500]
            attributes["error.type"] = span_status["message"].split(":", 1)[0][:100]
        self.spans.append(
            {
                "traceId": self.trace_id,
                "spanId": span_id,
                "parentSpanId": parent,
                "name": name,
                "kind": kind,
                "startTimeUnixNano": _nanos(start),
                "endTimeUnixNano": _nanos(end if end is not None else self.end_default),
                "attributes": _attributes(attributes),
                "status": span_status,
            }
        )

    def common(self, call: Row) -> dict[str, Any]:
        return {
            "gen_ai.conversation.id": self.detail.session_id,
            "gen_ai.provider.name": provider_for_model(call["model"]),
            "gen_ai.request.model": call["model"],
            "rlm_desktop.call_id": call["id"],
            "rlm_desktop.depth": call["depth"],
            "rlm_desktop.status": call["status"],
        }

    def call(self, call: Row, parent: str) -> None:
        span = self.span_id("call", call["id"])
        attributes = self.common(call) | {
            "gen_ai.usage.input_tokens": call["input_tokens"] or 0,
            "gen_ai.usage.output_tokens": call["output_tokens"] or 0,
            "rlm_desktop.cost_usd": call["cost_usd"],
        }
        if call["kind"] == "llm":
            attributes["gen_ai.operation.name"] = "chat"
            name, kind = f"chat {call['model']}", SPAN_KIND_CLIENT
        else:
            attributes |= {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "rlm",
                "gen_ai.agent.id": call["id"],
            }
            name, kind = "invoke_agent rlm", SPAN_KIND_INTERNAL
        if self.content:
            attributes["gen_ai.input.messages"] = _messages("user", call["prompt"])
            attributes["gen_ai.output.messages"] = _messages(
                "assistant", call["response"] or call["answer"]
            )
        self.add(
            span,
            parent,
            name,
            kind,
            call["started_at"],
            call["ended_at"],
            attributes,
            call["error"],
            call["status"],
        )
        if call["kind"] == "rlm":
            self.turns(call, span)
        else:
            self.children(call, span, {})

    def turns(self, call: Row, span: str) -> None:
        cell_spans: dict[tuple[int | None, int | None], str] = {}
        turn_of = {turn["idx"]: turn for turn in self.detail.turns_of(call["id"])}
        for request in self.detail.requests_of(call["id"]):
            attributes = self.common(call) | {
                "gen_ai.operation.name": "chat",
                "gen_ai.response.model": request["model"],
                "gen_ai.usage.input_tokens": request["input_tokens"] or 0,
                "gen_ai.usage.output_tokens": request["output_tokens"] or 0,
                "gen_ai.response.finish_reasons": [request["finish_reason"]]
                if request["finish_reason"]
                else None,
                "rlm_desktop.cost_usd": request["cost_usd"],
                "rlm_desktop.turn": request["turn"],
                "rlm_desktop.attempts": request["attempts"],
            }
            if self.content:
                previous = turn_of.get((request["turn"] or 0) - 1)
                prompt = previous["observation"] if previous else call["prompt"]
                attributes["gen_ai.input.messages"] = _messages("user", prompt)
                attributes["gen_ai.output.messages"] = _messages(
                    "assistant", request["content"], request["finish_reason"]
                )
            self.add(
                self.span_id("request", request["id"]),
                span,
                f"chat {request['model']}",
                SPAN_KIND_CLIENT,
                request["sent_at"],
                request["responded_at"],
                attributes,
                request["error"],
                "ok" if request["responded_at"] else None,
            )
        for turn in self.detail.turns_of(call["id"]):
            for cell in self.detail.cells_of(call["id"], turn["idx"]):
                cell_span = self.span_id("cell", call["id"], str(turn["idx"]), str(cell["idx"]))
                cell_spans[(turn["idx"], cell["idx"])] = cell_span
                self.cell(call, cell, span, cell_span)
        self.children(call, span, cell_spans)

    def cell(self, call: Row, cell: Row, parent: str, span: str) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "repl",
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": f"{call['id']}:{cell['turn']}:{cell['idx']}",
            "gen_ai.conversation.id": self.detail.session_id,
            "rlm_desktop.call_id": call["id"],
            "rlm_desktop.turn": cell["turn"],
            "rlm_desktop.cell": cell["idx"],
            "rlm_desktop.timed_out": bool(cell["timed_out"]),
        }
        if self.content:
            attributes["gen_ai.tool.call.arguments"] = json.dumps({"code": cell["code"]})
            attributes["gen_ai.tool.call.result"] = (cell["stdout"] or "") + (cell["stderr"] or "")
        end = cell["ended_at"]
        start = end - (cell["duration_s"] or 0.0) if end is not None else None
        self.add(
            span,
            parent,
            "execute_tool repl",
            SPAN_KIND_INTERNAL,
            start,
            end,
            attributes,
            cell["error"],
            "ok",
        )

    def children(
        self, call: Row, span: str, cells: dict[tuple[int | None, int | None], str]
    ) -> None:
        for child in self.detail.children(call["id"]):
            self.call(child, cells.get((child["parent_turn"], child["parent_cell"]), span))


def render(detail: SessionDetail, include_content: bool = False) -> str:
    """The session as one OTLP/JSON `ExportTraceServiceRequest` document."""
    builder = _Builder(detail, include_content)
    for root in detail.roots():
        builder.call(root, "")
    resource = _attributes(
        {
            "service.name": "rlm-desktop",
            "rlm_desktop.session_id": detail.session_id,
            "rlm_desktop.query": detail.session["query"] if include_content else None,
        }
    )
    document = {
        "resourceSpans": [
            {
                "resource": {"attributes": resource},
                "scopeSpans": [{"scope": {"name": "rlm_desktop"}, "spans": builder.spans}],
            }
        ]
    }
    return json.dumps(document, ensure_ascii=False) + "\n"
