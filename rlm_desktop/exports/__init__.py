"""A saved session written out: JSONL, Markdown, HTML, OTLP traces (JSON or protobuf), and traces
sent to a collector. Qt-free; above `review`, whose health findings the reports carry."""

from rlm_desktop.exports.formats import FORMATS, export, export_bytes, send_traces

__all__ = ["FORMATS", "export", "export_bytes", "send_traces"]
