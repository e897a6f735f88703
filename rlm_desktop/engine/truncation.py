"""Text cut to a limit with its head and tail kept, saying how much was cut: what the model is
shown of a long output, what the store keeps of one, and what the console shows before "more"."""

from __future__ import annotations


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and tail of `text` within `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    longest = _marker(len(text))
    keep = max(0, limit - len(longest))
    marker = _marker(len(text) - keep)
    head = keep * 2 // 3
    tail = keep - head
    return text[:head] + marker + (text[-tail:] if tail else "")


def _marker(cut: int) -> str:
    return f"\n[... {cut:,} characters cut; print less or slice ...]\n"
