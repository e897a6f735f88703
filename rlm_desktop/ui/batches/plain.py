"""Tooltips for text from outside the app (a model's answer, a question, a file's name): Qt
reads a tooltip that looks like markup as rich text, so the text is escaped inside a paragraph
that keeps its line breaks and shows it as it is."""

from __future__ import annotations

from html import escape

TIP_CHARS = 2_000
"""The most of a text a tooltip shows."""


def plain_tip(text: str, limit: int = TIP_CHARS) -> str:
    """`text` (cut at `limit` characters) as a tooltip that shows it literally."""
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return f"<p style='white-space:pre-wrap'>{escape(cut)}</p>"
