"""One entry point for the export formats: `export(store, session_id, fmt)`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rlm_desktop.store import export_jsonl, export_markdown, export_otlp
from rlm_desktop.store.detail import SessionDetail, load_detail
from rlm_desktop.store.redact import Redactor

if TYPE_CHECKING:
    from rlm_desktop.store.store import Store

Renderer = Callable[[SessionDetail, bool], str]
RENDERERS: dict[str, Renderer] = {
    "jsonl": export_jsonl.render,
    "md": export_markdown.render,
    "otlp": export_otlp.render,
}
FORMATS = tuple(RENDERERS)


def export(store: Store, session_id: str, fmt: str, include_content: bool = False) -> str:
    """The session in format `fmt` (`jsonl`, `md` or `otlp`); raises `SessionNotFound`.

    `include_content` adds prompt, completion and code text to OTLP spans; the JSONL and
    Markdown exports always carry the run's text. Secrets from this environment are scrubbed
    once more on the way out.
    """
    if fmt not in RENDERERS:
        raise ValueError(f"unknown export format {fmt!r}: use one of {', '.join(FORMATS)}")
    detail = load_detail(store, session_id)
    return Redactor.for_run().text(RENDERERS[fmt](detail, include_content))
