"""A readable Markdown report of a session: question, answer, settings, cost, tree and turns."""

from __future__ import annotations

import re

from rlm_desktop import formatting as fmt
from rlm_desktop.store.detail import Row, SessionDetail

OUTPUT_CAP = 4000
_CODE_BLOCK = re.compile(r"^```(?:repl|python|py)\b.*?^```[ \t]*$", re.DOTALL | re.MULTILINE)


def fence(text: str, language: str = "") -> str:
    """`text` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{language}\n{text.rstrip()}\n{marks}"


def _cap(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return text
    cut = len(text) - OUTPUT_CAP
    return f"{text[:OUTPUT_CAP]}\n… {cut:,} more characters (export as jsonl for the full text)"


def call_line(call: Row, *, markdown: bool = True) -> str:
    """One line describing a call of the tree (`markdown=False`: plain text for a terminal)."""
    seconds = f" · {call['wall_s']:.1f} s" if call.get("wall_s") is not None else ""
    error = f" · error: {call['error'].splitlines()[0]}" if call.get("error") else ""
    name = f"`{call['id']}`" if markdown else call["id"]
    return (
        f"{name} {call['kind']} · {call['model']} · depth {call['depth']} · "
        f"{call['status']} · {call['input_tokens'] or 0:,} in / {call['output_tokens'] or 0:,} out"
        f" · {fmt.cost(call['cost_usd'])}{seconds}{error}"
    )


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(rows: list[tuple[str, object]]) -> list[str]:
    lines = ["| | |", "|---|---|"]
    lines.extend(f"| {name} | {_cell(value)} |" for name, value in rows)
    return lines


def _settings(detail: SessionDetail) -> list[str]:
    session = detail.session
    budget = session["settings"].get("budget") or {}
    mode = session["mode"] or "—"
    if session.get("chosen_mode"):
        mode += f" → {session['chosen_mode']}"
    rows: list[tuple[str, object]] = [
        ("Mode", mode),
        ("Model", session["model"]),
        ("Sub-model", session["sub_model"]),
        ("Profile", session["profile"]),
    ]
    rows.extend((name, value) for name, value in budget.items() if value is not None)
    return ["## Settings", "", *_table(rows)]


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
        ("Started", fmt.when(session["started_at"], with_seconds=True, missing="—")),
    ]
    return ["## Cost", "", *_table(rows)]


def _documents(detail: SessionDetail) -> list[str]:
    documents = detail.session["documents"]
    if not documents:
        return []
    lines = [
        "## Documents",
        "",
        "| Name | Path | Characters | Tokens | SHA-256 |",
        "|---|---|---|---|---|",
    ]
    for doc in documents:
        digest = (doc["sha256"] or "")[:12]
        lines.append(
            f"| {doc['name']} | {doc['path'] or ''} | {doc['chars'] or 0:,} | "
            f"{doc['tokens'] if doc['tokens'] is not None else '—'} | {digest} |"
        )
    return lines


def _turns(detail: SessionDetail) -> list[str]:
    lines = ["## Turns"]
    for _, call in detail.walk():
        turns = detail.turns_of(call["id"])
        if not turns:
            continue
        lines += ["", f"### Call `{call['id']}` ({call['kind']}, depth {call['depth']})", ""]
        lines += ["Prompt:", "", fence(_cap(call["prompt"] or ""), "text")]
        for turn in turns:
            lines += ["", f"#### Turn {turn['idx'] + 1}", ""]
            prose = _CODE_BLOCK.sub("", turn["reply"] or "").strip()
            if prose:
                lines += [_cap(prose), ""]
            for cell in detail.cells_of(call["id"], turn["idx"]):
                lines += [fence(cell["code"] or "", "python"), ""]
                output = (cell["stdout"] or "") + (cell["stderr"] or "") + (cell["error"] or "")
                seconds = f"{cell['duration_s']:.2f} s" if cell["duration_s"] is not None else ""
                lines += [
                    f"Output ({seconds}):",
                    "",
                    fence(_cap(output) or "(nothing printed)"),
                    "",
                ]
    return lines if len(lines) > 1 else []


def render(detail: SessionDetail, include_content: bool = False) -> str:
    """The report (it always shows the run's code and output: that is its purpose)."""
    session = detail.session
    status = session["status"] + (f" — {session['error']}" if session["error"] else "")
    lines = [
        f"# RLM session {detail.session_id}",
        "",
        f"**Question:** {session['query']}",
        "",
        f"**Status:** {status}",
        "",
        "## Answer",
        "",
        session["answer"] or "_(no answer)_",
        "",
        *_settings(detail),
        "",
        *_cost(detail),
        "",
        *_documents(detail),
        "",
        "## Call tree",
        "",
    ]
    lines += [f"{'  ' * level}- {call_line(call)}" for level, call in detail.walk()]
    lines += ["", *_turns(detail)]
    return "\n".join(lines).rstrip() + "\n"
