"""A search hit's snippet, read back from FTS5 exactly, and shown with its first match in view.

FTS5's `snippet()` puts marks around each matched word of a window of the text. The marks are
made fresh for each search (`Marks`), so no text a run kept (a model's output may hold any
character) can pass for one. Read back, a snippet gives the exact text of its window (to find
the window in the whole text, and so the first match's offsets there) and the pieces people
see: on one line, cut to show at most `LEAD` characters before its first match and at most
`MOST` in all, matched words in brackets (`[word]`) with their offsets in `marked`.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field

LEAD = 48
"""The most a snippet shows before its first match (words that long are cut)."""
MOST = 160
"""The most a snippet shows in all, unless its first match alone is longer."""
ELLIPSIS = "…"


@dataclass(frozen=True)
class Snippet:
    """A snippet read back: `window` is the exact text it was made of (without marks or
    ellipses), `first` the first match's offsets in `window`, `pieces` what is shown."""

    window: str
    first: tuple[int, int]
    pieces: list[tuple[str, bool]]


@dataclass(frozen=True)
class Marks:
    """The marks of one search: unguessable, so the text itself never holds them."""

    nonce: str = field(default_factory=lambda: secrets.token_hex(8))

    @property
    def open(self) -> str:
        return f"\x02{self.nonce}["

    @property
    def close(self) -> str:
        return f"]{self.nonce}\x03"

    @property
    def cut(self) -> str:
        return f"\x02{self.nonce}…\x03"

    def snippet_sql(self, fts: str, column: int, tokens: int) -> str:
        """`snippet()` of `column` of index `fts` with these marks (hex and control characters
        only: nothing to quote)."""
        return f"snippet({fts}, {column}, '{self.open}', '{self.close}', '{self.cut}', {tokens})"

    def read(self, raw: str) -> Snippet | None:
        """The snippet `raw` read back; None when nothing in it is marked."""
        if self.open not in raw:
            return None
        parts = re.split(f"({re.escape(self.open)}|{re.escape(self.close)})", raw)
        window: list[str] = []
        pieces: list[tuple[str, bool]] = []
        first: tuple[int, int] | None = None
        length, matched = 0, False
        for part in parts:
            if part in (self.open, self.close):
                matched = part == self.open
                continue
            text = part.replace(self.cut, "")
            if matched and first is None:
                first = (length, length + len(text))
            window.append(text)
            length += len(text)
            pieces.append((part.replace(self.cut, ELLIPSIS), matched))
        assert first is not None
        return Snippet("".join(window), first, _in_view(_one_line(pieces)))


def _one_line(pieces: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """The pieces with every run of white space (new lines too) made one space."""
    flat: list[tuple[str, bool]] = []
    for text, matched in pieces:
        text = re.sub(r"\s+", " ", text)
        if flat and flat[-1][0].endswith(" ") and text.startswith(" "):
            text = text[1:]
        if text or matched:
            flat.append((text, matched))
    if flat and not flat[0][1]:
        flat[0] = (flat[0][0].lstrip(), False)
    if flat and not flat[-1][1]:
        flat[-1] = (flat[-1][0].rstrip(), False)
    return flat


def _in_view(pieces: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """The pieces cut to at most `LEAD` characters before the first match (from a word's start
    where one is near) and `MOST` in all, an ellipsis where something was cut."""
    first = next(i for i, (_text, matched) in enumerate(pieces) if matched)
    before = "".join(text for text, _matched in pieces[:first])
    if len(before) > LEAD:
        kept = before[-LEAD:]
        space = kept.find(" ")
        kept = kept[space + 1 :] if 0 <= space < LEAD // 2 else kept
        before = ELLIPSIS + kept.lstrip(ELLIPSIS)
    shown = [(before, False)] if before else []
    room = max(MOST - len(before), len(pieces[first][0]))
    for text, matched in pieces[first:]:
        if len(text) <= room:
            shown.append((text, matched))
            room -= len(text)
            continue
        if matched:  # a match is shown whole or not at all
            shown.append((ELLIPSIS, False))
        else:
            cut = text[:room]
            space = cut.rfind(" ")
            shown.append(((cut[: space + 1] if space > room // 2 else cut) + ELLIPSIS, False))
        break
    return shown
