"""One entry point for the export formats: `export(store, session_id, fmt)`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rlm_desktop.exports import html, jsonl, markdown, otlp
from rlm_desktop.redact import Redactor
from rlm_desktop.review.health import session_health
from rlm_desktop.store.detail import SessionDetail, load_detail

if TYPE_CHECKING:
    from rlm_desktop.store.store import Store

Renderer = Callable[[SessionDetail, bool], str]
RENDERERS: dict[str, Renderer] = {
    "jsonl": jsonl.render,
    "md": markdown.render,
    "otlp": otlp.render,
    "html": html.render,
}
WITH_HEALTH = {"md": markdown.render, "html": html.render}
"""The reports that carry a Health section, which `review` computes from the stored session."""
PROTOBUF = "otlp-proto"
FORMATS = (*RENDERERS, PROTOBUF)


def export(store: Store, session_id: str, fmt: str, include_content: bool = False) -> str:
    """The session in format `fmt` (`jsonl`, `md`, `otlp` or `html`); raises `SessionNotFound`.

    `include_content` adds prompt, completion and code text to OTLP spans; the JSONL, Markdown
    and HTML exports always carry the run's text. Secrets from this environment are scrubbed
    once more on the way out.
    """
    if fmt not in RENDERERS:
        raise ValueError(f"unknown text export format {fmt!r}: use one of {', '.join(RENDERERS)}")
    detail = load_detail(store, session_id)
    if fmt in WITH_HEALTH:
        health = session_health(store, detail.session_id)
        return Redactor.for_run().text(WITH_HEALTH[fmt](detail, include_content, health))
    return Redactor.for_run().text(RENDERERS[fmt](detail, include_content))


def export_bytes(store: Store, session_id: str, fmt: str, include_content: bool = False) -> bytes:
    """The session as a file's bytes in `fmt`: a text format as UTF-8, or `otlp-proto` (an OTLP
    `ExportTraceServiceRequest` in protobuf); raises `SessionNotFound`."""
    if fmt != PROTOBUF:
        return export(store, session_id, fmt, include_content).encode("utf-8")
    from rlm_desktop.exports import otlp_proto

    detail = load_detail(store, session_id)
    trace = otlp.spans(detail, include_content, Redactor.for_run().text)
    return otlp_proto.encode(trace)


def send_traces(
    store: Store, session_id: str, endpoint: str, include_content: bool = False
) -> str | None:
    """Post a session's trace to the OTLP/HTTP receiver at `endpoint` (protobuf, through the
    OpenTelemetry SDK's exporter); None when accepted, else one line saying why not."""
    from rlm_desktop.exports import otlp_proto

    detail = load_detail(store, session_id)
    trace = otlp.spans(detail, include_content, Redactor.for_run().text)
    return otlp_proto.send(trace, endpoint)
