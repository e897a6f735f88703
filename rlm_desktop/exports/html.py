"""A session as one self-contained HTML page: question, answer, settings, costs, the timeline as
inline SVG, the call tree and each turn's code (highlighted) and output.

Nothing is loaded from anywhere: styles are inline, there is no script, and a Content Security
Policy forbids any fetch, so the page opens the same offline. Everything from the run (the
question, documents' names, model output, code) is untrusted and goes through `html.escape`, and
the characters no file should hold raw (controls, bidi controls, noncharacters, lone surrogates:
parse errors in HTML, or worse) are marked as every export marks them (`exports.text`).
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.parsing import prose_without_code
from rlm_desktop.exports.markdown import cut_middle
from rlm_desktop.exports.text import exported_text
from rlm_desktop.review.health import sources_text as words
from rlm_desktop.store.detail import Row, SessionDetail

if TYPE_CHECKING:
    from rlm_desktop.review.health import HealthReport

TIMELINE_ROWS = 2000
"""Calls drawn on the timeline at most (a bigger run's first ones, in tree order)."""
ROW_H, LABEL_W, PLOT_W = 16, 90, 860
_COLOURS = {
    "ok": "#3f7fd8", "running": "#8aa9d6", "stopped": "#9aa1ad", "limit": "#d9a21b",
    "error": "#d0453b",
}  # fmt: skip
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_FORMATTER = HtmlFormatter(cssclass="hl")
_LEXER = PythonLexer()
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #1d2330;
  padding: 0 1em; overflow-wrap: anywhere; }
h1 { font-size: 1.4em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #d6dae3; }
table { border-collapse: collapse; } td, th { padding: 2px 10px; text-align: left;
  border-bottom: 1px solid #eceef3; vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
pre, code, .id { font-family: ui-monospace, monospace; font-size: 12.5px; }
pre { background: #f6f7f9; padding: 8px; overflow-x: auto; white-space: pre-wrap; }
.answer { white-space: pre-wrap; background: #eef6ee; padding: 10px; border-radius: 4px; }
.prose { white-space: pre-wrap; }
.status-ok { color: #1b7a35; } .status-error { color: #b3261e; }
.status-limit { color: #9a6700; } .status-stopped { color: #6b7280; }
.tree td:first-child { white-space: nowrap; }
.bar { display: inline-block; width: 120px; height: 8px; background: #e3e6ec; }
.bar span { display: block; height: 8px; background: #3f7fd8; }
.call { margin-top: 1.5em; border-left: 3px solid #c9d1e3; padding-left: 12px; }
svg text { font: 11px system-ui, sans-serif; }
.source { margin: 0.9em 0; padding: 2px 10px; border-left: 4px solid #1b7a35; }
.source.check { border-color: #d9a21b; } .source.warning { border-color: #d0453b;
  background: #fdf1f0; }
.state-ok { color: #1b7a35; } .state-check { color: #9a6700; }
.state-warning { color: #b3261e; font-weight: 600; }
blockquote { margin: 0.4em 0 0.6em 1em; white-space: pre-wrap; color: #394150; }
"""


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def _anchor(call_id: str) -> str:
    return f"call-{_e(call_id)}"


def _table(rows: list[tuple[str, object]]) -> str:
    body = "".join(f"<tr><th>{_e(name)}</th><td>{_e(value)}</td></tr>" for name, value in rows)
    return f"<table>{body}</table>"


def _settings(detail: SessionDetail) -> str:
    session = detail.session
    budget = session["settings"].get("budget") or {}
    mode = session["mode"] or "—"
    if session.get("chosen_mode") and session["chosen_mode"] != session["mode"]:
        mode += f" → {session['chosen_mode']}"
    rows: list[tuple[str, object]] = [
        ("Mode", mode),
        ("Model", session["model"]),
        ("Sub-model", session["sub_model"] or session["model"]),
        ("Profile", session["profile"]),
    ]
    rows.extend((name, value) for name, value in budget.items() if value is not None)
    return "<h2>Settings</h2>" + _table(rows)


def _costs(detail: SessionDetail) -> str:
    session = detail.session
    rows: list[tuple[str, object]] = [
        ("Cost", fmt.cost(session["cost_usd"], bool(session["unpriced"]), long=True)),
        ("Input tokens", f"{session['input_tokens']:,}"),
        ("Output tokens", f"{session['output_tokens']:,}"),
        ("Turns", session["turns"]),
        ("Sub-calls", session["sub_calls"]),
        ("Deepest level", session["max_depth_reached"]),
        ("Wall time", fmt.seconds(session["wall_s"]) or "—"),
        ("Started", fmt.when(session["started_at"], with_seconds=True, missing="—")),
    ]
    return "<h2>Cost</h2>" + _table(rows)


def _documents(detail: SessionDetail) -> str:
    documents = detail.session["documents"]
    if not documents:
        return ""
    head = (
        "<tr><th>Name</th><th>Type</th><th>Path</th><th class=n>Characters</th>"
        "<th class=n>Tokens</th></tr>"
    )
    body = "".join(
        f"<tr><td>{_e(doc['name'])}</td><td>{_e(doc.get('type') or '—')}</td>"
        f"<td>{_e(doc['path'] or '')}</td>"
        f"<td class=n>{doc['chars'] or 0:,}</td><td class=n>{_e(doc['tokens'] or '—')}</td></tr>"
        for doc in documents
    )
    return f"<h2>Documents</h2><table>{head}{body}</table>"


def _health(report: HealthReport | None) -> str:
    """The findings with their advice, and the share of each document that reached a model."""
    if report is None:
        return ""
    parts = ["<h2>Health</h2>"]
    if report.coverage.documents:
        head = "<tr><th>Document</th><th class=n>Characters</th><th class=n>Read</th><th></th></tr>"
        body = "".join(
            f"<tr><td>{_e(doc.name)}</td><td class=n>{doc.chars:,}</td>"
            f"<td class=n>{doc.share:.0%}</td><td><span class=bar>"
            f"<span style='width: {doc.share * 100:.1f}%'></span></span></td></tr>"
            for doc in report.coverage.documents
        )
        parts.append(
            f"<p>Coverage: {report.coverage.share:.0%} of the documents' characters reached a "
            f"model.</p><table>{head}{body}</table>"
        )
    if not report.findings:
        parts.append("<p>No findings: none of the known failure modes showed in this run.</p>")
        return "".join(parts)
    head = "<tr><th>Severity</th><th>Kind</th><th>Finding</th><th>Advice</th></tr>"
    body = "".join(
        f"<tr><td>{_e(f.severity)}</td><td>{_e(f.kind)}</td><td>{_e(f.message)}</td>"
        f"<td>{_e(f.advice)}</td></tr>"
        for f in report.findings
    )
    parts.append(f"<table class=findings>{head}{body}</table>")
    return "".join(parts)


def _sources(report: HealthReport | None) -> str:
    """Each source with its number, its state (a source not found in the warning style), where
    it is, the quote itself and why it was not found."""
    if report is None or not report.sources:
        return ""
    parts = [f"<h2>{words.SOURCES_HEADING}</h2>"]
    for source in report.sources:
        tone = words.tone(source)
        where = "".join(f" · {_e(part)}" for part in words.details(source))
        note = f"<p class=note>{_e(source.note)}</p>" if source.note else ""
        parts.append(
            f"<div class='source {tone}' id=source-{source.number}>"
            f"<p><strong>{_e(words.marker(source))}</strong> "
            f"<span class=state-{tone}>{_e(words.state(source))}</span>{where}</p>"
            f"<blockquote>{_e(cut_middle(source.quote))}</blockquote>{note}</div>"
        )
    return "".join(parts)


def _read(report: HealthReport | None) -> str:
    """The passages the sub-calls were given, those whose reply the answer repeats."""
    listing = words.read_listing(report.read) if report is not None else None
    if listing is None:
        return ""
    items = "".join(
        f"<li>{_e(words.passage_label(passage))} · sub-call "
        f"<a class=id href='#{_anchor(passage.call_id)}'>{_e(passage.call_id)}</a></li>"
        for passage in listing.passages
    )
    rest = f"<p>{_e(listing.rest)}</p>" if listing.rest else ""
    return (
        f"<h2>{words.READ_HEADING}</h2><p>{_e(listing.lead)}</p><ul class=read>{items}</ul>{rest}"
    )


def _status(status: str) -> str:
    return f"<span class='status-{fmt.status_tone(status)}'>{_e(fmt.status_text(status))}</span>"


def _tree(detail: SessionDetail) -> str:
    head = (
        "<tr><th>Call</th><th>Kind</th><th>Model</th><th class=n>Depth</th><th>Status</th>"
        "<th class=n>In</th><th class=n>Out</th><th class=n>Cost</th><th class=n>Time</th></tr>"
    )
    lines = []
    for level, call in detail.walk():
        wall = fmt.seconds(call.get("wall_s")) or "—"
        error = (
            f"<br><small>{_e(fmt.one_line(exported_text(call['error']), 200))}</small>"
            if call["error"]
            else ""
        )
        lines.append(
            f"<tr><td style='padding-left:{8 + 16 * level}px'>"
            f"<a class=id href='#{_anchor(call['id'])}'>{_e(call['id'])}</a></td>"
            f"<td>{_e(call['kind'])}</td><td>{_e(call['model'])}</td>"
            f"<td class=n>{_e(call['depth'])}</td><td>{_status(call['status'] or '')}{error}</td>"
            f"<td class=n>{call['input_tokens'] or 0:,}</td>"
            f"<td class=n>{call['output_tokens'] or 0:,}</td>"
            f"<td class=n>{_e(fmt.cost(call['cost_usd']))}</td><td class=n>{_e(wall)}</td></tr>"
        )
    return f"<h2>Call tree</h2><table class=tree>{head}{''.join(lines)}</table>"


def _code(code: str) -> str:
    return str(highlight(code, _LEXER, _FORMATTER))


def _turn(detail: SessionDetail, call: Row, turn: Row) -> str:
    parts = [f"<h4>Turn {turn['idx'] + 1}</h4>"]
    if turn["reply"] is None:
        parts.append("<p><em>The run ended during this turn; what it had done so far:</em></p>")
    prose = prose_without_code(detail.reply_of(call["id"], turn))
    if prose:
        parts.append(f"<div class=prose>{_e(cut_middle(prose))}</div>")
    for cell in detail.cells_of(call["id"], turn["idx"]):
        output = (cell["stdout"] or "") + (cell["stderr"] or "") + (cell["error"] or "")
        seconds = fmt.seconds(cell["duration_s"])
        parts.append(_code(cell["code"] or ""))
        parts.append(
            f"<div>Output{f' ({_e(seconds)})' if seconds else ''}:</div>"
            f"<pre>{_e(cut_middle(output) or '(nothing printed)')}</pre>"
        )
    for code in detail.unfinished_code(call["id"], turn):
        parts.append(_code(code) + "<p><em>Not finished when the run ended.</em></p>")
    return "".join(parts)


def _calls(detail: SessionDetail) -> str:
    sections = []
    for _, call in detail.walk():
        body = [
            f"<section class=call id='{_anchor(call['id'])}'>"
            f"<h3>Call <span class=id>{_e(call['id'])}</span> · {_e(call['kind'])} · "
            f"depth {_e(call['depth'])} · {_status(call['status'] or '')}</h3>",
            f"<div>Prompt:</div><pre>{_e(cut_middle(call['prompt'] or ''))}</pre>",
        ]
        body.extend(_turn(detail, call, turn) for turn in detail.turns_of(call["id"]))
        if call["kind"] == "llm" and call["response"]:
            body.append(f"<div>Response:</div><pre>{_e(cut_middle(call['response']))}</pre>")
        if call["error"]:
            body.append(f"<div>Error:</div><pre>{_e(cut_middle(call['error']))}</pre>")
        body.append("</section>")
        sections.append("".join(body))
    return "<h2>Calls and turns</h2>" + "".join(sections)


def _bounds(detail: SessionDetail) -> tuple[float, float]:
    starts = [call["started_at"] for call in detail.calls if call["started_at"] is not None]
    ends = [call["ended_at"] for call in detail.calls if call["ended_at"] is not None]
    first = min(starts, default=detail.session["started_at"] or 0.0)
    last = max([*ends, *starts, detail.session["ended_at"] or first])
    return first, max(last - first, 1e-6)


def timeline_svg(detail: SessionDetail) -> str:
    """Every call as a bar on the run's time axis, one row each in tree order, coloured by
    status (RLM calls darker than LLM calls); hovering a bar shows its figures, clicking it
    goes to the call's turns."""
    order = detail.walk()[:TIMELINE_ROWS]
    if not order:
        return "<p><em>(no calls)</em></p>"
    first, span = _bounds(detail)
    scale = PLOT_W / span
    height = ROW_H * len(order) + 24
    bars = []
    for row, (level, call) in enumerate(order):
        start = call["started_at"] if call["started_at"] is not None else first
        end = call["ended_at"] if call["ended_at"] is not None else first + span
        x = LABEL_W + (start - first) * scale
        width = max((end - start) * scale, 1.5)
        y = row * ROW_H + 2
        colour = _COLOURS.get(fmt.status_tone(call["status"] or ""), _COLOURS["error"])
        tip = (
            f"{call['id']} · {call['kind']} · {call['model']} · {fmt.status_text(call['status'] or '')}"
            f"\n{call['input_tokens'] or 0:,} in / {call['output_tokens'] or 0:,} out · "
            f"{fmt.cost(call['cost_usd'])} · {fmt.seconds(end - start)}"
        )
        opacity = "1" if call["kind"] == "rlm" else "0.65"
        bars.append(
            f"<a href='#{_anchor(call['id'])}'><title>{_e(tip)}</title>"
            f"<text x='{2 + 6 * min(level, 8)}' y='{y + 11}'>{_e(fmt.short_id(call['id']))}</text>"
            f"<rect x='{x:.1f}' y='{y}' width='{width:.1f}' height='{ROW_H - 4}' rx='2'"
            f" fill='{colour}' fill-opacity='{opacity}'/></a>"
        )
    axis_y = height - 8
    shown = len(order)
    more = len(detail.calls) - shown
    note = (
        f"<p><em>The first {shown:,} of {len(detail.calls):,} calls.</em></p>" if more > 0 else ""
    )
    return (
        f"<svg width='{LABEL_W + PLOT_W + 10}'"
        f" height='{height}' role='img' aria-label='Timeline of the calls'>"
        f"{''.join(bars)}"
        f"<line x1='{LABEL_W}' y1='{axis_y - 8}' x2='{LABEL_W + PLOT_W}' y2='{axis_y - 8}'"
        " stroke='#8891a0'/>"
        f"<text x='{LABEL_W}' y='{axis_y + 4}'>0 s</text>"
        f"<text x='{LABEL_W + PLOT_W}' y='{axis_y + 4}' text-anchor='end'>"
        f"{_e(fmt.seconds(span))}</text></svg>{note}"
    )


def render(
    detail: SessionDetail, include_content: bool = False, health: HealthReport | None = None
) -> str:
    """The page (it always shows the run's code and output: that is its purpose), with a
    Health section when `health` is given."""
    session = detail.session
    error = f" — {session['error']}" if session["error"] else ""
    title = f"RLM session {detail.session_id}"
    answer = session["answer"]
    answer_html = (
        f"<div class=answer>{_e(answer)}</div>" if answer else "<p><em>(no answer)</em></p>"
    )
    return exported_text(
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{POLICY}\">"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        f"<title>{_e(title)}</title>"
        f"<style>{STYLE}{_FORMATTER.get_style_defs('.hl')}</style></head><body>"
        f"<h1>{_e(title)}</h1>"
        f"<p><strong>Question:</strong></p><div class=prose>{_e(session['query'])}</div>"
        f"<p><strong>Status:</strong> {_status(session['status'])}{_e(error)}</p>"
        f"<h2>Answer</h2>{answer_html}{_sources(health)}{_read(health)}"
        f"{_settings(detail)}{_costs(detail)}{_documents(detail)}{_health(health)}"
        f"<h2>Timeline</h2>{timeline_svg(detail)}"
        f"{_tree(detail)}{_calls(detail)}"
        "</body></html>\n"
    )
