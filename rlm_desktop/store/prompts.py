"""Where a call's prompt is kept, and reading it back whole.

A prompt of up to `LONG_PROMPT_CHARS` characters is kept in `calls.prompt`. A longer one (model
code can send megabytes, and send them again) is kept once: as the span of one of the session's
documents when it is an exact slice of one (`context[0][start:end]`: `calls.prompt_document`,
`prompt_start`, `prompt_end`), else in `texts` under its SHA-256 (`calls.prompt_sha256`), shared
by every call that sends it. `calls.prompt` then holds its first `HEAD_CHARS` characters, which
search indexes and lists show, and `calls.prompt_chars` its length. The writer's side is
`prompt_keeper.py`; `PromptReader` reads any of them back.

A child RLM call's first user message holds its prompt (`Question: ...`): a long one is taken out
of the stored opening, which says where it goes (`prompt_at`), and put back when it is read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from rlm_desktop.store.allowance import HEAD_CHARS
from rlm_desktop.store.texts import read_text

__all__ = ["HEAD_CHARS", "LONG_PROMPT_CHARS", "DocumentSpans", "PromptReader"]

LONG_PROMPT_CHARS = 16_384
"""Prompts longer than this are kept by reference (a document's span, or a shared text)."""
PLACE_COLUMNS = (
    "prompt", "prompt_sha256", "prompt_document", "prompt_start", "prompt_end", "prompt_note",
)  # fmt: skip
"""The columns of `calls` that say what a call's prompt is and where it is kept."""
PROMPT_AT = "prompt_at"
_KEY = 32
_STRIDE = 1_024
"""A slice of the documents at least `_STRIDE + _KEY` long holds one of their `_KEY`-character
anchors (one every `_STRIDE` characters) within its first `_STRIDE` characters."""
Row = dict[str, Any]


class DocumentSpans:
    """Finds where a text is an exact slice of one of the session's documents."""

    def __init__(self, documents: Sequence[str]) -> None:
        self._documents = documents
        self._anchors: dict[str, tuple[int, int]] | None = None

    def find(self, text: str) -> tuple[int, int, int] | None:
        """`(document, start, end)` with `documents[document][start:end] == text`, or None.

        Costs at most `_STRIDE` lookups and one comparison in C; the anchors are made once."""
        if len(text) < _STRIDE + _KEY or not self._documents:
            return None
        anchors = self._anchors if self._anchors is not None else self._made_anchors()
        for offset in range(_STRIDE):
            hit = anchors.get(text[offset : offset + _KEY])
            if hit is None:
                continue
            number, position = hit
            start = position - offset
            if start >= 0 and self._documents[number].startswith(text, start):
                return number, start, start + len(text)
        return None

    def _made_anchors(self) -> dict[str, tuple[int, int]]:
        anchors: dict[str, tuple[int, int]] = {}
        for number, text in enumerate(self._documents):
            for position in range(0, len(text) - _KEY + 1, _STRIDE):
                anchors.setdefault(text[position : position + _KEY], (number, position))
        self._anchors = anchors
        return anchors


def without_prompt(opening: list[Any], prompt: str) -> list[Any]:
    """A call's opening messages with its long `prompt` taken out of the first that holds it
    (`prompt_at` says where it was); as they are when none does."""
    for position, message in enumerate(opening):
        content = message.get("content") if isinstance(message, dict) else None
        at = content.find(prompt) if isinstance(content, str) else -1
        if isinstance(content, str) and at >= 0:
            kept = {**message, "content": content[:at] + content[at + len(prompt) :], PROMPT_AT: at}
            return [*opening[:position], kept, *opening[position + 1 :]]
    return opening


def with_prompt(opening: list[Any], prompt: str) -> list[Any]:
    """Opening messages as they were sent: the call's prompt put back where `prompt_at` says."""
    restored = []
    for message in opening:
        if isinstance(message, dict) and PROMPT_AT in message:
            content, at = str(message.get("content") or ""), int(message[PROMPT_AT])
            message = {k: v for k, v in message.items() if k != PROMPT_AT}
            message["content"] = content[:at] + prompt + content[at:]
        restored.append(message)
    return restored


class PromptReader:
    """Reads the prompts of one session's calls back whole, from wherever each is kept.

    Each shared text and each document is read once and kept for the reader's life, so a
    prompt sent a thousand times is one string in memory.
    """

    def __init__(self, conn: sqlite3.Connection, session_id: str) -> None:
        self._conn = conn
        self._session_id = session_id
        self._texts: dict[str, str] = {}
        self._documents: dict[int, str] = {}
        self._spans: dict[tuple[int, int, int], str] = {}

    def whole(self, row: Row) -> str:
        """The whole prompt of a `calls` row (its `PLACE_COLUMNS`): from `texts`, a document, or
        `prompt` itself. A reference whose text is missing reads as the head that is kept."""
        digest = row.get("prompt_sha256")
        text = self.text(digest) if digest is not None else None
        if text is not None:
            return text
        number, start, end = (row.get(f"prompt_{part}") for part in ("document", "start", "end"))
        if number is not None and start is not None and end is not None:
            found = self._span(int(number), int(start), int(end))
            if found is not None:
                return found
        return str(row.get("prompt") or "")

    def text(self, digest: str) -> str | None:
        """The shared text named `digest` (None when the database does not hold it)."""
        text = self._texts.get(digest)
        if text is None:
            text = read_text(self._conn, digest)
            if text is not None:
                self._texts[digest] = text
        return text

    def of_call(self, call_id: str) -> str | None:
        """The whole prompt of the session's call `call_id` (None when it has no such call)."""
        cursor = self._conn.execute(
            f"SELECT {', '.join(PLACE_COLUMNS)} FROM calls WHERE session_id = ? AND id = ?",
            [self._session_id, call_id],
        )
        values = cursor.fetchone()
        if values is None:
            return None
        return self.whole(dict(zip(PLACE_COLUMNS, values, strict=True)))

    def _span(self, number: int, start: int, end: int) -> str | None:
        key = (number, start, end)
        found = self._spans.get(key)
        if found is None:
            document = self._document(number)
            if document is None or not 0 <= start <= end <= len(document):
                return None
            found = self._spans[key] = document[start:end]
        return found

    def _document(self, number: int) -> str | None:
        if number not in self._documents:
            row = self._conn.execute(
                "SELECT t.text FROM documents d JOIN texts t ON t.sha256 = d.sha256"
                " WHERE d.session_id = ? AND d.position = ?",
                [self._session_id, number],
            ).fetchone()
            if row is None or row[0] is None:
                return None
            self._documents[number] = str(row[0])
        return self._documents[number]
