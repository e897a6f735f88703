"""The review banner's words for a session: where an imported one came from, and when."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rlm_desktop import formatting as fmt

SOURCES = {
    "rlms": "rlms log",
    "rlm-desktop": "RLM Desktop export",
    "dspy": "DSPy trajectory",
}
"""How each format the importer reads is named to the user."""


def source_name(source: str) -> str:
    """The name of a trajectory format (`rlms` → "rlms log")."""
    return SOURCES.get(source, f"{source} file")


def day(ts: float) -> str:
    """A date as people write it: "6 Dec 2026" (the same on every platform)."""
    moment = datetime.fromtimestamp(ts)
    return f"{moment.day} {moment:%b %Y}"


def session_banner(head: dict[str, Any]) -> str:
    """The banner over a saved session under review: an imported one says from which file,
    in which format and when it was imported; any other its id, start, and status."""
    origin = head.get("imported")
    if origin:
        shown = fmt.one_line(fmt.terminal_safe(str(origin.get("file") or "")), 80)
        imported = origin.get("imported_at")
        when = f" · {day(imported)}" if imported else ""
        source = source_name(str(origin.get("format") or ""))
        return f"Imported from {source} {shown}{when} · read-only"
    return (
        f"Saved session {fmt.short_session_id(head['id'])} · {fmt.when(head['started_at'])} · "
        f"{fmt.status_text(head['status'])} · read-only"
    )


def left_out_text(left_out: tuple[str, ...] | list[str]) -> str:
    """The banner's tooltip: what the file could not carry ("" when it carried everything)."""
    if not left_out:
        return ""
    return "Left out of the file:\n" + "\n".join(f"• {line}" for line in left_out)
