"""The writer's side of `prompts.py`: each call's prompt kept once, within the session's cap.

A long prompt is held back until the call's first request goes out: a call refused by the budget
before it was sent (or that ended before sending for any other reason) keeps the head of its
prompt and a note of its length, not the whole text no model read. Once sent, the prompt is kept
as the document span it repeats, else as a shared text, and counted once per session against the
cap (`allowance.py`) however often it is sent; past the cap it keeps its head and the cap's note.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from rlm_desktop.store.allowance import HEAD_CHARS, TextAllowance, cut_note
from rlm_desktop.store.prompts import LONG_PROMPT_CHARS, DocumentSpans, without_prompt
from rlm_desktop.store.texts import keep_text, text_sha256

REFUSED = "the budget refused the call before it was sent"
Row = dict[str, Any]


def _place(prompt: str, chars: int, note: str | None = None, **where: object) -> Row:
    """The `calls` columns of a prompt (`prompts.PLACE_COLUMNS` and `prompt_chars`)."""
    return {
        "prompt": prompt, "prompt_chars": chars, "prompt_note": note, "prompt_sha256": None,
        "prompt_document": None, "prompt_start": None, "prompt_end": None, **where,
    }  # fmt: skip


def never_sent(status: str) -> str:
    """Why a call that ended with `status` before its first request keeps only a head."""
    return REFUSED if status == "budget_exceeded" else f"the call ended ({status}) before it was sent"


@dataclass(frozen=True)
class KeeperState:
    """What a `PromptKeeper` holds besides its connection and documents (`saved`)."""

    unsent: dict[str, str]
    openings: dict[str, str]
    seen: set[Hashable]
    stored: int
    cut: int


class PromptKeeper:
    """Keeps the prompts of one session's calls (the writer calls it as events come)."""

    def __init__(
        self, conn: sqlite3.Connection, allowance: TextAllowance, documents: Sequence[str]
    ) -> None:
        self._conn = conn
        self._allowance = allowance
        self._spans = DocumentSpans(documents)
        self._unsent: dict[str, str] = {}
        """Long prompts of calls whose first request has not gone out yet."""
        self._openings: dict[str, str] = {}
        """Long prompts of RLM calls whose opening has not been recorded yet."""
        self._seen: set[Hashable] = set()
        """The shared texts and document spans this session has counted already."""

    def documents_known(self, documents: Sequence[str]) -> None:
        """Look for prompts in `documents` from now on (the session's stored so far)."""
        self._spans = DocumentSpans(documents)

    def started(self, call_id: str, kind: str, prompt: str) -> Row:
        """The columns of a call that started with `prompt` (as a column holds it)."""
        allowance = self._allowance
        if len(prompt) > LONG_PROMPT_CHARS:
            self._unsent[call_id] = prompt
            if kind == "rlm":
                self._openings[call_id] = prompt
            allowance.count(HEAD_CHARS)
            return _place(prompt[:HEAD_CHARS], len(prompt))
        if allowance.take(len(prompt)) or len(prompt) <= 2 * HEAD_CHARS:
            return _place(prompt, len(prompt))
        kept = allowance.cut_text(prompt)
        allowance.count(len(kept))
        return _place(kept, len(prompt), allowance.reason)

    def sent(self, call_id: str) -> Row | None:
        """The columns of a call whose first request went out, if its long prompt was held back:
        the prompt kept whole (by reference), or cut at the session's cap."""
        prompt = self._unsent.pop(call_id, None)
        if prompt is None:
            return None
        span = self._spans.find(prompt)
        digest = None if span is not None else text_sha256(prompt)
        key: Hashable = span or digest
        if key not in self._seen:
            if not self._allowance.take(len(prompt)):
                kept = self._allowance.cut_text(prompt)
                self._allowance.count(len(kept) - HEAD_CHARS)
                return _place(kept, len(prompt), self._allowance.reason)
            self._seen.add(key)
        head = prompt[:HEAD_CHARS]
        if span is not None:
            number, start, end = span
            return _place(
                head, len(prompt), prompt_document=number, prompt_start=start, prompt_end=end
            )
        return _place(head, len(prompt), prompt_sha256=keep_text(self._conn, prompt, digest))

    def ended(self, call_id: str, status: str) -> Row | None:
        """The columns of a call that ended before its long prompt was sent: its head and a note
        of its length (None when nothing was held back)."""
        self._openings.pop(call_id, None)
        prompt = self._unsent.pop(call_id, None)
        if prompt is None:
            return None
        reason = never_sent(status)
        kept = cut_note(prompt, reason)
        self._allowance.count(len(kept) - HEAD_CHARS)
        return _place(kept, len(prompt), reason)

    def unsent(self) -> list[str]:
        """The calls whose long prompt is still held back."""
        return list(self._unsent)

    def opening(self, call_id: str, opening: list[Any]) -> list[Any]:
        """An RLM call's opening messages as stored: its long prompt taken out (`prompts`)."""
        prompt = self._openings.pop(call_id, None)
        return opening if prompt is None else without_prompt(opening, prompt)

    def shared(self, text: str) -> str:
        """Keep `text` in `texts` (a system prompt); counted once per session. Its name."""
        digest = text_sha256(text)
        if digest not in self._seen:
            self._seen.add(digest)
            self._allowance.count(len(text))
        return keep_text(self._conn, text, digest)

    def saved(self) -> KeeperState:
        """What `restore` needs to undo a batch that could not be written."""
        allowance = self._allowance
        return KeeperState(
            dict(self._unsent), dict(self._openings), set(self._seen), allowance.stored,
            allowance.cut,
        )  # fmt: skip

    def restore(self, state: KeeperState) -> None:
        """Go back to `state` (the batch since was rolled back)."""
        self._unsent, self._openings, self._seen = state.unsent, state.openings, state.seen
        self._allowance.stored, self._allowance.cut = state.stored, state.cut
