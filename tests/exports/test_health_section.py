"""The Health section of the Markdown and HTML reports, over a run the real engine recorded
against the scripted server: the findings with their advice and the share of each document read."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from pymarkdown.api import PyMarkdownApi

from rlm_desktop import paths
from rlm_desktop.exports import export
from rlm_desktop.review.health import HealthReport, session_health
from rlm_desktop.store import Store
from tests.review.health_runs import NOTE, recorded
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

FAILING = repl("print(crate_total)")
RUN = [FAILING, FAILING, repl("print(context[:400])"), repl('FINAL("Sector 3 holds 480 crates.")')]


@pytest.fixture
def checked(
    isolated_home: Path, scripted_server: ScriptedServer
) -> Iterator[tuple[Store, HealthReport]]:
    """A run whose code keeps raising and that reads the first 400 characters of a note."""
    store = Store(paths.database_path())
    try:
        session_id = asyncio.run(
            recorded(store, scripted_server, scripted(root=RUN), documents=[NOTE])
        )
        yield store, session_health(store, session_id)
    finally:
        store.close()


class _Rows(HTMLParser):
    """The text of each table row, cell by cell."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th") and self.rows:
            self.rows[-1].append("")

    def handle_data(self, data: str) -> None:
        if self.rows and self.rows[-1]:
            self.rows[-1][-1] = (self.rows[-1][-1] + data).strip()


def _health_part(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end)]


def test_markdown_health_lists_findings_with_advice_and_coverage(
    checked: tuple[Store, HealthReport], tmp_path: Path
) -> None:
    store, health = checked
    assert health.findings
    text = export(store, health.session_id, "md")
    section = _health_part(text, "## Health", "## Call tree")
    html = MarkdownIt("commonmark").enable("table").render(section)
    rows = _Rows()
    rows.feed(html)
    share = f"{400 / len(NOTE.text):.0%}"
    assert ["Document", "Characters", "Read", "Unread ranges"] in rows.rows
    assert [NOTE.name, f"{len(NOTE.text):,}", share, "1"] in rows.rows
    for finding in health.findings:
        assert [finding.severity, finding.kind, finding.message, finding.advice] in rows.rows
    path = tmp_path / "report.md"
    path.write_text(text)
    result = PyMarkdownApi().disable_rule_by_identifier("md013").scan_path(str(path))
    assert not result.scan_failures, [
        f"{failure.line_number}: {failure.rule_id}" for failure in result.scan_failures
    ]


def test_html_health_lists_findings_with_advice_and_coverage(
    checked: tuple[Store, HealthReport],
) -> None:
    store, health = checked
    page = export(store, health.session_id, "html")
    rows = _Rows()
    rows.feed(_health_part(page, "<h2>Health</h2>", "<h2>Timeline</h2>"))
    share = f"{400 / len(NOTE.text):.0%}"
    assert [NOTE.name, f"{len(NOTE.text):,}", share, ""] in rows.rows
    assert f"width: {400 / len(NOTE.text) * 100:.1f}%" in page
    for finding in health.findings:
        assert [finding.severity, finding.kind, finding.message, finding.advice] in rows.rows
