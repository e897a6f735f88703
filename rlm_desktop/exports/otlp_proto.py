"""A session's trace through the OpenTelemetry SDK: OTLP protobuf bytes, and sending to a collector.

The spans come from `otlp.spans` (one builder for every OTLP form); here they become the
SDK's `ReadableSpan`s, which its own encoder turns into an `ExportTraceServiceRequest` and its
OTLP/HTTP exporter posts to a receiver (Phoenix, Langfuse, Jaeger, an OpenTelemetry collector).
The SDK is imported only when a trace is encoded or sent.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rlm_desktop.exports.otlp import SCOPE, SPAN_KIND_CLIENT, STATUS_ERROR, TraceRecord

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_PATH = "/v1/traces"
SEND_TIMEOUT_S = 5.0


def to_sdk_spans(trace: TraceRecord) -> list[ReadableSpan]:
    """The trace as the SDK's finished spans (parents, kinds, status, times and events kept)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, TraceFlags
    from opentelemetry.trace.status import Status, StatusCode

    resource = Resource.create(trace.resource)
    scope = InstrumentationScope(SCOPE)
    trace_id = int(trace.trace_id, 16)

    def context(span_id: str) -> SpanContext:
        return SpanContext(trace_id, int(span_id, 16), False, TraceFlags(TraceFlags.SAMPLED))

    finished = []
    for span in trace.spans:
        status = (
            Status(StatusCode.ERROR, span.status_message)
            if span.status_code == STATUS_ERROR
            else Status(StatusCode.UNSET)
        )
        attributes: dict[str, Any] = {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in span.attributes.items()
        }
        finished.append(
            ReadableSpan(
                name=span.name,
                context=context(span.span_id),
                parent=context(span.parent_id) if span.parent_id else None,
                resource=resource,
                attributes=attributes,
                events=[
                    Event(event.name, event.attributes, event.time_ns) for event in span.events
                ],
                kind=SpanKind.CLIENT if span.kind == SPAN_KIND_CLIENT else SpanKind.INTERNAL,
                status=status,
                start_time=span.start_ns,
                end_time=span.end_ns,
                instrumentation_scope=scope,
            )
        )
    return finished


def encode(trace: TraceRecord) -> bytes:
    """The trace as a serialized OTLP `ExportTraceServiceRequest` (what `/v1/traces` takes)."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return bytes(encode_spans(to_sdk_spans(trace)).SerializeToString())


def traces_url(endpoint: str) -> str:
    """The traces URL of an OTLP/HTTP endpoint given as its base (as `OTEL_EXPORTER_OTLP_ENDPOINT`
    is), or already ending in `/v1/traces`."""
    base = endpoint.strip().rstrip("/")
    return base if base.endswith(TRACES_PATH) else base + TRACES_PATH


def configured_endpoint(explicit: str | None = None) -> str | None:
    """The collector to send to: the setting or flag given, else `OTEL_EXPORTER_OTLP_ENDPOINT`."""
    return (explicit or os.environ.get(ENDPOINT_ENV) or "").strip() or None


def endpoint_problem(endpoint: str) -> str | None:
    """Why `endpoint` cannot be a collector's URL (None when it can): it must be http(s)."""
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (
            f"{endpoint.strip()!r} is not an http:// or https:// URL (e.g. http://localhost:4318)"
        )
    return None


def send(trace: TraceRecord, endpoint: str, timeout_s: float = SEND_TIMEOUT_S) -> str | None:
    """Post the trace to the OTLP/HTTP receiver at `endpoint` as protobuf.

    Returns None when it was accepted, else one line saying why not; never raises for a receiver
    that is down, slow or refuses (the exporter's own retries end within `timeout_s`).
    """
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    url = traces_url(endpoint)
    exporter_log = logging.getLogger("opentelemetry.exporter.otlp.proto.http")
    level = exporter_log.level
    exporter_log.setLevel(logging.CRITICAL)  # its retry warnings would repeat our one line
    try:
        exporter = OTLPSpanExporter(endpoint=url, timeout=timeout_s)
        try:
            result = exporter.export(to_sdk_spans(trace))
        finally:
            exporter.shutdown()  # type: ignore[no-untyped-call]
    except Exception as error:
        return f"traces not sent to {url}: {type(error).__name__}: {error}"
    finally:
        exporter_log.setLevel(level)
    if result is not SpanExportResult.SUCCESS:
        return f"traces not sent to {url}: the collector did not accept them (is it running?)"
    return None
