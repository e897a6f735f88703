"""The HTML report of a real recorded run: self-contained, escaped, complete, and opened in
headless Chromium with JavaScript on and every request it might make caught by a proxy."""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.exports import export
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.exports.browser import CHROMIUM, dump_dom, page_requests, recording_proxy
from tests.review.recorded import Plan, record_runs
from tests.scripted_server import ScriptedServer

HOSTILE = (
    "7 fish <script>document.title='pwned';fetch('http://leak.example/s')</script>"
    "<img src='http://leak.example/i.png' onerror=\"document.title='img'\"> & <b>done</b>"
)
QUESTION = 'How many fish are in tank <A> & "B"?'


class _Elements(HTMLParser):
    """Counts the elements of a document by tag, and keeps its title and text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, int] = {}
        self.text: list[str] = []
        self._in_title = False
        self.titles: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self._in_title = tag == "title"
        if self._in_title:
            self.titles.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_title:
            self.titles[-1] += data

    @property
    def title(self) -> str:
        """The document's title (the first `<title>`; SVG shapes have their own)."""
        return self.titles[0] if self.titles else ""


def _parsed(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    return parser


@pytest.fixture
async def hostile_run(scripted_server: ScriptedServer) -> str:
    (session_id,) = await record_runs(scripted_server, [Plan(QUESTION, fan_out=3, answer=HOSTILE)])
    return session_id


@pytest.fixture
def report(hostile_run: str) -> str:
    store = Store(paths.database_path())
    try:
        return export(store, hostile_run, "html")
    finally:
        store.close()


def _call_ids(session_id: str) -> list[str]:
    store = Store(paths.database_path())
    try:
        return [call["id"] for call in store.session(session_id)["calls"]]
    finally:
        store.close()


def test_the_report_escapes_the_run_and_loads_nothing(report: str, hostile_run: str) -> None:
    page = _parsed(report)
    assert page.tags.get("script", 0) == 0
    assert page.tags.get("img", 0) == 0
    assert page.tags.get("link", 0) == 0
    text = "".join(page.text)
    assert HOSTILE in text
    assert QUESTION in text
    assert "&lt;script&gt;" in report
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", report, re.I)
    assert "@import" not in report
    assert "url(" not in report
    for call_id in _call_ids(hostile_run):
        assert call_id in text
    assert page.tags.get("svg") == 1
    assert page.tags.get("rect") == len(_call_ids(hostile_run))
    assert "llm_query_batched" in text  # the turn's code, highlighted
    assert 'class="hl"' in report


def test_sessions_export_writes_the_html_report(hostile_run: str, isolated_home: Path) -> None:
    target = isolated_home / "report.html"
    done = run_cli(
        "sessions", "export", hostile_run[:12], "--format", "html", "-o", str(target),
        home=isolated_home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = target.read_text(encoding="utf-8")
    assert written.startswith("<!DOCTYPE html>")
    assert HOSTILE in "".join(_parsed(written).text)


def test_chromium_shows_the_answer_and_every_call_without_the_network(
    report: str, hostile_run: str, tmp_path: Path
) -> None:
    if CHROMIUM is None:
        pytest.fail("chromium is missing: make test installs it (apt-get install chromium)")
    page = tmp_path / "report.html"
    page.write_text(report, encoding="utf-8")
    control = tmp_path / "control.html"
    control.write_text(f"<!DOCTYPE html><body>{HOSTILE}</body>", encoding="utf-8")
    with recording_proxy() as (proxy, requests):
        dump_dom(control, proxy, tmp_path / "control-profile")
        # The proxy does see what an unescaped page would fetch...
        assert any("leak.example" in request for request in page_requests(requests))
        requests.clear()
        dom = dump_dom(page, proxy, tmp_path / "chromium-profile")
        # ... and the report asks for nothing.
        assert page_requests(requests) == []
    shown = _parsed(dom)
    assert shown.title == f"RLM session {hostile_run}"  # no script ran to change it
    assert shown.tags.get("script", 0) == 0
    assert shown.tags.get("img", 0) == 0
    text = "".join(shown.text)
    assert HOSTILE in text
    for call_id in _call_ids(hostile_run):
        assert call_id in text


def test_an_interrupted_run_reports_what_it_had_done(
    store: Store, record_run: Callable[..., str]
) -> None:
    session_id = record_run("cut-short", turns=2, calls_per_turn=2, finish=False)
    store.mark_interrupted(session_id)
    page = _parsed(export(store, session_id, "html"))
    text = "".join(page.text)
    assert "interrupted" in text
    assert "(no answer)" in text
    calls = store.session(session_id)["calls"]
    assert calls
    for call in calls:
        assert call["id"] in text
    assert page.tags.get("rect") == len(calls)
