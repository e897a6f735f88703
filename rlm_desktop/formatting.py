"""How numbers, ids and statuses read in the interface (plain functions, no Qt)."""

from __future__ import annotations

from datetime import datetime

from rlm_desktop.review.call_tree import Totals

_STATUS_TEXT = {
    "running": "running",
    "ok": "ok",
    "error": "error",
    "cancelled": "cancelled",
    "budget_exceeded": "over budget",
    "max_turns": "turn limit",
    "timeout": "timed out",
    "completed": "completed",
    "interrupted": "interrupted",
}


def short_id(call_id: str) -> str:
    """The last eight characters of an id: enough to tell calls apart on screen."""
    return call_id[-8:]


def status_text(status: str) -> str:
    """A status as a person would say it."""
    return _STATUS_TEXT.get(status, status.replace("_", " "))


def tokens(n: int | None) -> str:
    """1234 -> "1,234"; 1_234_567 -> "1.23M"."""
    if n is None:
        return ""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.2f}M"
    return f"{n:,}"


def cost(usd: float | None) -> str:
    """Dollars with enough digits to tell small calls apart."""
    if usd is None:
        return "unpriced"
    if usd == 0:
        return "$0"
    if usd < 0.01:
        return f"${usd:.4f}"
    return f"${usd:.2f}" if usd >= 1 else f"${usd:.3f}"


def seconds(s: float | None) -> str:
    """0.25 -> "0.25 s"; 75 -> "1:15"."""
    if s is None:
        return ""
    if s < 10:
        return f"{s:.2f} s"
    if s < 60:
        return f"{s:.1f} s"
    minutes, rest = divmod(int(s), 60)
    if minutes < 60:
        return f"{minutes}:{rest:02d}"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{rest:02d}"


def subtree(t: Totals) -> str:
    """A node's subtree totals in one short line."""
    price = "unpriced" if t.unpriced and not t.cost_usd else cost(t.cost_usd)
    parts = [f"{t.calls - 1} sub" if t.calls > 1 else "", f"{tokens(t.tokens)} tok", price]
    if t.running:
        parts.append(f"{t.running} running")
    if t.errors:
        parts.append(f"{t.errors} failed")
    return " · ".join(p for p in parts if p)


def when(ts: float | None) -> str:
    """A timestamp as local date and time."""
    if not ts:
        return ""
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def one_line(text: str, limit: int = 120) -> str:
    """Collapse whitespace and cut at `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
