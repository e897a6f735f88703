"""A readable Markdown report of a session: question, answer, settings, cost, tree and turns."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.parsing import prose_without_code
from rlm_desktop.exports.text import exported_text
from rlm_desktop.review.health import sources_text as words
from rlm_desktop.store.detail import Row, SessionDetail

if TYPE_CHECKING:
    from rlm_desktop.review.health import HealthReport

OUTPUT_CAP = 4000
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]|])")
"""What makes emphasis, code, links, images and table cells: escaped in untrusted inline text."""
_BLOCK_START = re.compile(r"^(\d+(?=[.)])|(?=[#+-]))")
"""What starts a heading, a list or a rule at the start of a line: escaped there."""


def _longest_backticks(text: str) -> int:
    """The longest run of backticks in `text`: its fence or code span must be longer."""
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def fence(text: str, language: str = "") -> str:
    """`text` in a code fence longer than any run of backticks inside it."""
    marks = "`" * max(3, _longest_backticks(text) + 1)
    return f"{marks}{language}\n{text.rstrip()}\n{marks}"


def cut_middle(text: str, limit: int = OUTPUT_CAP) -> str:
    """`text` cut from the middle past `limit` characters: its start and its end (where a
    traceback's last line is) both stay."""
    if len(text) <= limit:
        return text
    head = text[: limit // 2]
    tail = text[-(limit - limit // 2) :]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n… {cut:,} characters cut (export as jsonl for the full text) …\n{tail}"


def code_span(text: str) -> str:
    """`text` as inline code, delimited by more backticks than it holds (nothing in it renders)."""
    marks = "`" * (_longest_backticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{marks}{pad}{text}{pad}{marks}"


def call_line(call: Row, *, markdown: bool = True) -> str:
    """One line describing a call of the tree (`markdown=False`: plain text for a terminal); in
    Markdown its texts (a shared session's may be anything) escaped as `_inline` escapes them."""
    seconds = f" · {call['wall_s']:.1f} s" if call.get("wall_s") is not None else ""
    error = ""
    if call.get("error"):
        first = exported_text(call["error"]).splitlines()[0]
        error = f" · error: {code_span(first) if markdown else first}"
    name = code_span(call["id"]) if markdown else call["id"]
    model = fmt.model_name(call["model"] or "")
    said = f"{call['kind']} · {model} · depth {call['depth']} · {call['status']}"
    return (
        f"{name} {_inline(said) if markdown else said} · {call['input_tokens'] or 0:,} in / "
        f"{call['output_tokens'] or 0:,} out"
        f" · {fmt.cost(call['cost_usd'])}{seconds}{error}"
    )


def _inline(value: object) -> str:
    """Untrusted text on one line of Markdown: no HTML, no line break, no emphasis, code span,
    link or image, no end of a table cell, and at a line's start no heading, list, rule or fence;
    its characters marked as every export marks them before its spaces are folded."""
    text = exported_text(str(value)).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    line = " ".join(_MARKDOWN_PUNCTUATION.sub(r"\\\1", text).split())
    if line.startswith("~"):
        return "&#126;" + line[1:]
    return _BLOCK_START.sub(r"\1\\", line, count=1)


def _cell(value: object) -> str:
    return _inline(value) or "—"


def table(header: tuple[str, ...], rows: Sequence[tuple[object, ...]]) -> list[str]:
    """A table with a real header row, pipes spaced the same way on every row."""
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
        *("| " + " | ".join(_cell(value) for value in row) + " |" for row in rows),
    ]


def _settings(detail: SessionDetail) -> list[str]:
    session = detail.session
    budget = session["settings"].get("budget") or {}
    mode = session["mode"] or "—"
    if session.get("chosen_mode"):
        mode += f" → {session['chosen_mode']}"
    rows: list[tuple[str, object]] = [
        ("Mode", mode),
        ("Model", fmt.model_and_id(session["model"] or "")),
        ("Sub-model", fmt.model_and_id(session["sub_model"] or "")),
        ("Profile", session["profile"]),
    ]
    rows.extend((name, value) for name, value in budget.items() if value is not None)
    return ["## Settings", "", *table(("Setting", "Value"), rows)]


def _cost(detail: SessionDetail) -> list[str]:
    session = detail.session
    wall = f"{session['wall_s']:.1f} s" if session["wall_s"] is not None else "—"
    cost = fmt.cost(session["cost_usd"], bool(session["unpriced"]), long=True)
    rows: list[tuple[str, object]] = [
        ("Cost", cost),
        ("Input tokens", f"{session['input_tokens']:,}"),
        ("Output tokens", f"{session['output_tokens']:,}"),
        ("Turns", session["turns"]),
        ("Sub-calls", session["sub_calls"]),
        ("Deepest level", session["max_depth_reached"]),
        ("Wall time", wall),
        (
            "Started",
            fmt.when(session["started_at"], with_seconds=True, with_zone=True, missing="—"),
        ),
        ("Ended", fmt.when(session["ended_at"], with_seconds=True, with_zone=True, missing="—")),
    ]
    return ["## Cost", "", *table(("Figure", "Value"), rows)]


def _documents(detail: SessionDetail) -> list[str]:
    documents = detail.session["documents"]
    if not documents:
        return []
    rows: list[tuple[object, ...]] = [
        (
            doc["name"],
            doc.get("type") or "—",
            doc["path"] or "",
            f"{doc['chars'] or 0:,}",
            doc["tokens"] if doc["tokens"] is not None else "—",
            (doc["sha256"] or "")[:12],
        )
        for doc in documents
    ]
    header = ("Name", "Type", "Path", "Characters", "Tokens", "SHA-256")
    return ["## Documents", "", *table(header, rows)]


def _health(report: HealthReport | None) -> list[str]:
    """The health check's findings with their advice, and the share of each document read."""
    if report is None:
        return []
    lines = ["## Health", ""]
    documents = report.coverage.documents
    if documents:
        rows = [
            (doc.name, f"{doc.chars:,}", f"{doc.share:.0%}", f"{len(doc.uncovered):,}")
            for doc in documents
        ]
        lines += [
            f"Coverage: {report.coverage.share:.0%} of the documents' characters reached a model.",
            "",
            *table(("Document", "Characters", "Read", "Unread ranges"), rows),
            "",
        ]
    if not report.findings:
        return [*lines, "No findings: none of the known failure modes showed in this run."]
    rows_f = [(f.severity, f.kind, f.message, f.advice) for f in report.findings]
    return [*lines, *table(("Severity", "Kind", "Finding", "Advice"), rows_f)]


def _block_quote(text: str) -> list[str]:
    """`text` as a block quote of one paragraph, escaped as `_inline` escapes (a fence would
    be inert in CommonMark, but Python-Markdown does not know fences inside block quotes)."""
    return [f"> {_inline(cut_middle(text)) or '(empty)'}"]


def _sources(report: HealthReport | None) -> list[str]:
    """Each source with its number, its state in words, where it is and the quote itself."""
    if report is None or not report.sources:
        return []
    lines = [f"## {words.SOURCES_HEADING}"]
    for source in report.sources:
        state = words.state(source)
        shown = state if source.found else f"**{state}**"
        head = " · ".join([shown, *(_inline(part) for part in words.details(source))])
        lines += [
            "",
            f"**{_inline(words.marker(source))}** {head}",
            "",
            *_block_quote(source.quote),
        ]
        if source.note:
            lines += ["", f"Note: {_inline(source.note)}"]
    return lines


def _read(report: HealthReport | None) -> list[str]:
    """The passages the sub-calls were given, those whose reply the answer repeats."""
    listing = words.read_listing(report.read) if report is not None else None
    if listing is None:
        return []
    items = [
        f"- {_inline(words.passage_label(passage))} · sub-call {code_span(passage.call_id)}"
        for passage in listing.passages
    ]
    rest = ["", listing.rest] if listing.rest else []
    return [f"## {words.READ_HEADING}", "", listing.lead, "", *items, *rest]


def _output(cell: Row) -> list[str]:
    """What a cell printed, its stderr and its error: each kept, each cut from the middle."""
    seconds = f" ({cell['duration_s']:.2f} s)" if cell["duration_s"] is not None else ""
    parts = [
        (f"Output{seconds}:", cell["stdout"] or ""),
        ("Standard error:", cell["stderr"] or ""),
        ("Error:", cell["error"] or ""),
    ]
    shown = [(label, text) for label, text in parts if text.strip()]
    if not shown:
        return [f"Output{seconds}: nothing printed.", ""]
    lines: list[str] = []
    for label, text in shown:
        lines += [label, "", fence(cut_middle(text), "text"), ""]
    return lines


def _turn(detail: SessionDetail, call: Row, turn: Row) -> list[str]:
    lines = [f"#### Call {_inline(call['id'])} · turn {turn['idx'] + 1}", ""]
    if turn["reply"] is None:
        lines += ["_The run ended during this turn; what it had done so far:_", ""]
    prose = prose_without_code(detail.reply_of(call["id"], turn))
    if prose:
        lines += [fence(cut_middle(prose), "text"), ""]
    for cell in detail.cells_of(call["id"], turn["idx"]):
        lines += [fence(cell["code"] or "", "python"), "", *_output(cell)]
    for code in detail.unfinished_code(call["id"], turn):
        lines += [fence(code, "python"), "", "_Not finished when the run ended._", ""]
    return lines


def _turns(detail: SessionDetail) -> list[str]:
    lines = ["## Turns"]
    for _, call in detail.walk():
        turns = detail.turns_of(call["id"])
        if not turns:
            continue
        heading = f"Call {call['id']} ({call['kind']}, depth {call['depth']})"
        lines += ["", f"### {_inline(heading)}", ""]
        lines += ["Prompt:", "", fence(cut_middle(call["prompt"] or ""), "text"), ""]
        for turn in turns:
            lines += _turn(detail, call, turn)
    return lines if len(lines) > 1 else []


def _tree(detail: SessionDetail) -> list[str]:
    """The call tree as nested ordered lists: four spaces a level, which Python-Markdown and
    CommonMark both nest (unordered lists would need two for the linters, too few for the former)."""
    return [f"{'    ' * level}1. {call_line(call)}" for level, call in detail.walk()]


def render(
    detail: SessionDetail, include_content: bool = False, health: HealthReport | None = None
) -> str:
    """The report (it always shows the run's code and output: that is its purpose), with a
    Health section when `health` is given.

    The question, the answer and the model's replies are shown verbatim in fences: they are
    untrusted text, and rendered Markdown could load remote images or break the report's
    structure. It lints clean under markdownlint's and pymarkdown's default rules but line length.
    Characters no file should hold raw are marked (`exports.text`).
    """
    session = detail.session
    status = session["status"] + (f" — {session['error']}" if session["error"] else "")
    answer = session["answer"]
    sections = [
        [f"# RLM session {detail.session_id}"],
        ["## Question", "", fence(session["query"] or "", "text")],
        [f"**Status:** {_inline(status)}"],
        ["## Answer", "", fence(answer, "text") if answer else "No answer."],
        _sources(health),
        _read(health),
        _settings(detail),
        _cost(detail),
        _documents(detail),
        _health(health),
        ["## Call tree", "", *_tree(detail)],
        _turns(detail),
    ]
    text = "\n\n".join("\n".join(section) for section in sections if section)
    return exported_text(re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n")
