"""One entry point for the export formats: `export(store, session_id, fmt)`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rlm_desktop.exports import html, jsonl, markdown, otlp
from rlm_desktop.redact import Redactor
from rlm_desktop.review.health.report import analyse, past_runs, profiles
from rlm_desktop.store.detail import SessionDetail, load_detail

if TYPE_CHECKING:
    from rlm_desktop.review.health import HealthReport
    from rlm_desktop.store.store import Store

Renderer = Callable[[SessionDetail, bool, "HealthReport"], str]
RENDERERS: dict[str, Renderer] = {
    "jsonl": jsonl.render,
    "md": markdown.render,
    "otlp": otlp.render,
    "html": html.render,
}
"""Each text format, given the session and its health (which `review` computes from the stored
session): the reports' Health, Sources and Read to answer sections, the JSONL metadata line's
`sources`, the OTLP root span's source events."""
PROTOBUF = "otlp-proto"
FORMATS = (*RENDERERS, PROTOBUF)


def export(
    store: Store,
    session_id: str,
    fmt: str,
    include_content: bool = False,
    *,
    with_documents: bool = False,
) -> str:
    """The session in format `fmt` (`jsonl`, `md`, `otlp` or `html`); raises `SessionNotFound`.

    `include_content` adds prompt, completion and code text, and the answer's quotes, to OTLP
    spans; the JSONL, Markdown and HTML exports always carry the run's text. `with_documents`
    (JSONL only) adds the documents' texts, so an import elsewhere has coverage, verified
    sources and the preview. Secrets from this environment are scrubbed once more on the way
    out.
    """
    if fmt not in RENDERERS:
        raise ValueError(f"unknown text export format {fmt!r}: use one of {', '.join(RENDERERS)}")
    _documents_only_in_jsonl(fmt, with_documents)
    detail = load_detail(store, session_id)
    health = _health(store, detail)
    if with_documents:
        documents = store.context_documents(detail.session_id)
        rendered = jsonl.render(detail, include_content, health, documents)
    else:
        rendered = RENDERERS[fmt](detail, include_content, health)
    return Redactor.for_run().text(rendered)


def _documents_only_in_jsonl(fmt: str, with_documents: bool) -> None:
    """Refuse `with_documents` for any format but JSONL (the only one that carries them)."""
    if with_documents and fmt != "jsonl":
        raise ValueError(f"only the jsonl export carries the documents, not {fmt}")


def _trace(store: Store, session_id: str, include_content: bool) -> otlp.TraceRecord:
    detail = load_detail(store, session_id)
    health = _health(store, detail)
    return otlp.spans(detail, include_content, Redactor.for_run().text, health)


def _health(store: Store, detail: SessionDetail) -> HealthReport:
    """The session's health, from the detail already read (`session_health` would read it again)."""
    return analyse(detail, store.document_texts(detail.session_id), past_runs(store), profiles())


def export_bytes(
    store: Store,
    session_id: str,
    fmt: str,
    include_content: bool = False,
    *,
    with_documents: bool = False,
) -> bytes:
    """The session as a file's bytes in `fmt`: a text format as UTF-8, or `otlp-proto` (an OTLP
    `ExportTraceServiceRequest` in protobuf); raises `SessionNotFound`. `with_documents`: as
    for `export` (JSONL only)."""
    if fmt != PROTOBUF:
        text = export(store, session_id, fmt, include_content, with_documents=with_documents)
        return text.encode("utf-8")
    _documents_only_in_jsonl(fmt, with_documents)
    from rlm_desktop.exports import otlp_proto

    return otlp_proto.encode(_trace(store, session_id, include_content))


def send_traces(
    store: Store, session_id: str, endpoint: str, include_content: bool = False
) -> str | None:
    """Post a session's trace to the OTLP/HTTP receiver at `endpoint` (protobuf, through the
    OpenTelemetry SDK's exporter); None when accepted, else one line saying why not."""
    from rlm_desktop.exports import otlp_proto

    return otlp_proto.send(_trace(store, session_id, include_content), endpoint)
