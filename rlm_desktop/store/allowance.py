"""A session's stored text against its cap (`RunConfig.stored_text_cap_chars`).

What a session keeps is counted as the writer writes it: each event's log row, and each long
prompt it keeps once (`store/prompts.py`: a text new to the session, or a span of a document that
it reads back as). Once an event would take the session past its cap, every text of the event
longer than twice `HEAD_CHARS` keeps its head and a note saying how much was not stored and
why, so each later event adds at most a few thousand characters; `cut` counts what was left
out, which the session's row keeps (`sessions.cut_chars`).
"""

from __future__ import annotations

from typing import Any

from rlm_desktop.engine.config import DEFAULT_STORED_TEXT_CAP_CHARS

HEAD_CHARS = 2_000
"""What a text cut short keeps of its start."""
CAP_SETTING = "stored_text_cap_chars"


def cut_note(text: str, reason: str, keep: int = HEAD_CHARS) -> str:
    """`text`'s first `keep` characters and a note of what was not stored, and why."""
    left_out = len(text) - keep
    return (
        f"{text[:keep]}\n[… {left_out:,} more characters not stored ({len(text):,} characters in"
        f" all): {reason}]"
    )


class TextAllowance:
    """How much text a session has stored (`stored`), of its `cap`, and what was cut (`cut`)."""

    def __init__(self, cap: int = DEFAULT_STORED_TEXT_CAP_CHARS) -> None:
        self.cap = cap
        self.stored = 0
        self.cut = 0

    @property
    def reason(self) -> str:
        """Why a text was cut, as its note says."""
        return f"the session reached its stored-text cap of {self.cap:,} characters ({CAP_SETTING})"

    def take(self, chars: int) -> bool:
        """Count `chars` more and say True when they fit under the cap; False (nothing counted)
        when they do not."""
        if self.stored + chars > self.cap:
            return False
        self.stored += chars
        return True

    def count(self, chars: int) -> None:
        """Count `chars` stored whatever the cap (what a cut text still keeps)."""
        self.stored += chars

    def cut_text(self, text: str) -> str:
        """`text` cut to its head with the cap's note (the cut counted)."""
        self.cut += len(text) - HEAD_CHARS
        return cut_note(text, self.reason)

    def cut_long(self, payload: dict[str, Any]) -> dict[str, Any]:
        """`payload` with each of its texts (nested ones too) longer than twice `HEAD_CHARS`
        cut to its head and the cap's note: what an event past the cap may keep."""
        return {name: self._cut(value) for name, value in payload.items()}

    def _cut(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.cut_text(value) if len(value) > 2 * HEAD_CHARS else value
        if isinstance(value, dict):
            return {name: self._cut(item) for name, item in value.items()}
        if isinstance(value, list):
            return [self._cut(item) for item in value]
        return value
