"""Two saved runs side by side, with no Qt: their settings, their figures (cost, tokens, turns,
sub-calls, depth, wall time) with the change from one to the other, and how their answers differ.

`compare(left, right)` takes two `SessionDetail`s (`store.detail.load_detail`); the comparison
window and any other view render the `Comparison` it returns.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from rlm_desktop import formatting as fmt
from rlm_desktop.store.detail import SessionDetail, load_detail

if TYPE_CHECKING:
    from rlm_desktop.store.store import Store

Row = dict[str, Any]
_WORDS = re.compile(r"\s+|\w+|[^\w\s]")
WORD_DIFF_LIMIT = 1_000_000
"""Word pairs above which answers are compared line by line (about 500 words each)."""


@dataclass(frozen=True)
class Line:
    """One compared setting or figure: how each run reads, and whether they differ."""

    name: str
    left: str
    right: str
    change: str = ""
    """The right run's figure relative to the left's ("+$0.012 (+40%)"), for numbers."""

    @property
    def differs(self) -> bool:
        """True when the two runs read differently."""
        return self.left != self.right


@dataclass(frozen=True)
class Segment:
    """A stretch of the answers: in both (`same`), only the left's, or only the right's."""

    side: Literal["same", "left", "right"]
    text: str


@dataclass(frozen=True)
class Comparison:
    """Everything compared between two runs."""

    left: SessionDetail
    right: SessionDetail
    settings: list[Line]
    figures: list[Line]
    answer: list[Segment]
    answer_diff: list[str]
    """The answers as a unified diff, line by line (empty when they are equal)."""

    @property
    def same_answer(self) -> bool:
        """True when both runs gave exactly the same answer."""
        return (self.left.session["answer"] or "") == (self.right.session["answer"] or "")


def _text(value: object) -> str:
    return "—" if value is None or value == "" else str(value)


def _budget(session: Row) -> Row:
    budget: Row = session["settings"].get("budget") or {}
    return budget


SETTINGS: list[tuple[str, Callable[[Row], object]]] = [
    ("Model", lambda s: s["model"]),
    ("Sub-model", lambda s: s["sub_model"] or s["model"]),
    ("Profile", lambda s: s["profile"]),
    ("Mode", lambda s: s["chosen_mode"] or s["mode"]),
    ("Depth (max_depth)", lambda s: _budget(s).get("max_depth")),
    ("Turns per call (max_turns)", lambda s: _budget(s).get("max_turns")),
    ("Cost cap (USD)", lambda s: _budget(s).get("max_cost_usd")),
    ("Token cap", lambda s: _budget(s).get("max_tokens")),
    ("Sub-call cap", lambda s: _budget(s).get("max_sub_calls")),
    ("Time limit (s)", lambda s: _budget(s).get("timeout_s")),
    ("Concurrency", lambda s: _budget(s).get("concurrency")),
    ("Documents", lambda s: ", ".join(doc["name"] for doc in s["documents"])),
]


def _change(left: float | None, right: float | None, show: Callable[[float], str]) -> str:
    if left is None or right is None or left == right:
        return ""
    delta = right - left
    sign = "+" if delta > 0 else "-"
    ratio = f" ({delta / left:+.0%})" if left else ""
    return f"{sign}{show(abs(delta))}{ratio}"


def _cost(session: Row) -> float | None:
    return None if session["cost_usd"] is None else float(session["cost_usd"])


FIGURES: list[tuple[str, Callable[[Row], float | None], Callable[[float], str]]] = [
    ("Cost", _cost, fmt.dollars),
    ("Input tokens", lambda s: s["input_tokens"], lambda n: fmt.tokens(int(n))),
    ("Output tokens", lambda s: s["output_tokens"], lambda n: fmt.tokens(int(n))),
    ("Turns", lambda s: s["turns"], lambda n: f"{int(n):,}"),
    ("Sub-calls", lambda s: s["sub_calls"], lambda n: f"{int(n):,}"),
    ("Deepest level", lambda s: s["max_depth_reached"], lambda n: f"{int(n)}"),
    ("Wall time", lambda s: s["wall_s"], fmt.seconds),
]


def _figures(left: Row, right: Row) -> list[Line]:
    lines = [Line("Status", fmt.status_text(left["status"]), fmt.status_text(right["status"]))]
    for name, value, show in FIGURES:
        a, b = value(left), value(right)
        if name == "Cost":
            shown = (fmt.cost(a, bool(left["unpriced"])), fmt.cost(b, bool(right["unpriced"])))
        else:
            shown = (_text(None if a is None else show(a)), _text(None if b is None else show(b)))
        lines.append(Line(name, *shown, change=_change(a, b, show)))
    return lines


def word_diff(left: str, right: str) -> list[Segment]:
    """The two texts as stretches in both, only in `left` and only in `right`, word by word
    (line by line for long texts, where comparing every word with every other takes too long)."""
    a, b = _WORDS.findall(left), _WORDS.findall(right)
    if len(a) * len(b) > WORD_DIFF_LIMIT:
        a, b = left.splitlines(keepends=True), right.splitlines(keepends=True)
    segments: list[Segment] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            segments.append(Segment("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            segments.append(Segment("left", "".join(a[i1:i2])))
        if j2 > j1:
            segments.append(Segment("right", "".join(b[j1:j2])))
    return segments


def compare(left: SessionDetail, right: SessionDetail) -> Comparison:
    """How `right` differs from `left`."""
    a, b = left.session, right.session
    answers = (a["answer"] or "", b["answer"] or "")
    diff = difflib.unified_diff(
        answers[0].splitlines(),
        answers[1].splitlines(),
        fromfile=f"answer of {left.session_id}",
        tofile=f"answer of {right.session_id}",
        lineterm="",
    )
    return Comparison(
        left=left,
        right=right,
        settings=[Line(name, _text(value(a)), _text(value(b))) for name, value in SETTINGS],
        figures=_figures(a, b),
        answer=word_diff(*answers),
        answer_diff=list(diff),
    )


def load_comparison(store: Store, left_id: str, right_id: str) -> Comparison:
    """Read two sessions (ids or unique prefixes) and compare them; raises `SessionNotFound`."""
    return compare(load_detail(store, left_id), load_detail(store, right_id))
