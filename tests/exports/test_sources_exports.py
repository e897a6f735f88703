"""An answer's sources and the passages read to answer it, in every export, over runs the real
engine recorded: Markdown (linted, rendered by two renderers), HTML (opened in Chromium), OTLP
(decoded with OpenTelemetry's own protobuf definitions) and JSONL (read with `rlms`' types);
and control text in quotes and document names that cannot change any report's structure."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown
import pytest
from markdown_it import MarkdownIt
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from pymarkdown.api import PyMarkdownApi
from rlm.core.types import RLMMetadata

from rlm_desktop.exports import export, export_bytes, send_traces
from rlm_desktop.review.health import HealthReport, session_health
from rlm_desktop.store import Store
from tests.exports.browser import CHROMIUM, dump_dom, page_requests, recording_proxy
from tests.exports.otlp_receiver import OtlpReceiver
from tests.exports.sourced_runs import (
    APPROVED,
    CONTROL,
    FORGED,
    HOSTILE,
    MADE_UP,
    MINUTES,
    MISSPELT,
    READ_CHARS,
    hostile_run,
    sourced_run,
)
from tests.exports.test_otlp import attrs, parsed_json, spans_of
from tests.scripted_server import ScriptedServer

NOT_FOUND_NOTE = "not in the documents: the model may have made it up"


@pytest.fixture
async def sourced(store: Store, scripted_server: ScriptedServer) -> HealthReport:
    """The health of a run with an exact, a fuzzy and a made-up source and a sub-call reading."""
    return session_health(store, await sourced_run(store, scripted_server))


@pytest.fixture
async def hostile(store: Store, scripted_server: ScriptedServer) -> HealthReport:
    """The health of a run whose document, its name and the answer's quotes hold control text."""
    return session_health(store, await hostile_run(store, scripted_server))


def _sub_call(store: Store, session_id: str) -> str:
    (call_id,) = store.db.conn.execute(
        "SELECT id FROM calls WHERE session_id = ? AND kind = 'llm'", [session_id]
    ).fetchone()
    return str(call_id)


def _lint(text: str, tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    path.write_text(text, encoding="utf-8")
    result = PyMarkdownApi().disable_rule_by_identifier("md013").scan_path(str(path))
    assert not result.scan_failures, [
        f"{failure.line_number}: {failure.rule_id} {failure.rule_description}"
        for failure in result.scan_failures
    ]


class _Blocks(HTMLParser):
    """The text of each paragraph, block quote, list item and heading, in order, as
    `(tag, text)` (a block quote or list item holds the text of the blocks inside it); and
    every tag seen with its attributes."""

    BLOCKS = ("p", "h1", "h2", "h3", "h4", "h5", "h6", "pre")
    HOLDERS = ("blockquote", "li")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[str, str]] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self._open: list[tuple[str, int]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        held = any(opened in self.HOLDERS for opened, _ in self._open)
        if tag in self.HOLDERS or (tag in self.BLOCKS and not held):
            self.blocks.append((tag, ""))
            self._open.append((tag, len(self.blocks) - 1))

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for _, index in self._open[-1:]:
            tag, text = self.blocks[index]
            self.blocks[index] = (tag, text + data)

    def texts(self) -> list[tuple[str, str]]:
        """Each block's text with its whitespace collapsed, blocks that hold only others left out."""
        shown = [(tag, " ".join(text.split())) for tag, text in self.blocks]
        return [(tag, text) for tag, text in shown if text]


def _blocks(html: str) -> _Blocks:
    parsed = _Blocks()
    parsed.feed(html)
    return parsed


def _section(blocks: list[tuple[str, str]], heading: str) -> list[tuple[str, str]]:
    """The blocks after the `<h2>` named `heading`, up to the next `<h2>`."""
    start = blocks.index(("h2", heading)) + 1
    end = next((i for i in range(start, len(blocks)) if blocks[i][0] == "h2"), len(blocks))
    return blocks[start:end]


def _renderings(text: str) -> dict[str, str]:
    return {
        "commonmark": MarkdownIt("commonmark").enable("table").render(text),
        "python-markdown": markdown.markdown(text, extensions=["tables", "fenced_code"]),
    }


def test_the_recorded_run_has_each_kind_of_source(sourced: HealthReport) -> None:
    assert [(s.quote, s.match) for s in sourced.sources] == [
        (APPROVED, "exact"),
        (MISSPELT, "fuzzy"),
        (MADE_UP, "not_found"),
    ]
    [passage] = sourced.read
    assert (passage.document, passage.start, passage.end, passage.used) == (
        MINUTES.name,
        0,
        READ_CHARS,
        True,
    )


def test_markdown_lists_each_source_and_what_was_read(
    store: Store, sourced: HealthReport, tmp_path: Path
) -> None:
    text = export(store, sourced.session_id, "md")
    _lint(text, tmp_path)
    assert text.index("## Answer") < text.index("## Sources") < text.index("## Read to answer")
    assert text.index("## Read to answer") < text.index("## Settings")
    start = MINUTES.text.index(APPROVED)
    fuzzy = sourced.sources[1]
    assert fuzzy.score is not None
    assert fuzzy.start is not None
    assert fuzzy.end is not None
    expected_sources = [
        ("p", f"[1] found word for word · minutes.txt, characters {start}–{start + len(APPROVED)}"
              " · given as a source"),
        ("blockquote", APPROVED),
        ("p", f"[2] found approximately (score {fuzzy.score:.0f}) · minutes.txt, characters "
              f"{fuzzy.start:,}–{fuzzy.end:,} · given as a source"),
        ("blockquote", MISSPELT),
        ("p", "[3] not in the documents · given as a source"),
        ("blockquote", MADE_UP),
        ("p", f"Note: {sourced.sources[2].note}"),
    ]  # fmt: skip
    assert sourced.sources[2].note.startswith(NOT_FOUND_NOTE)
    call_id = _sub_call(store, sourced.session_id)
    expected_read = [
        ("p", "The answer repeats the replies of the sub-calls that were given these passages:"),
        ("li", f"minutes.txt, characters 0–{READ_CHARS} · sub-call {call_id}"),
    ]
    for renderer, html in _renderings(text).items():
        blocks = _blocks(html).texts()
        assert _section(blocks, "Sources") == expected_sources, renderer
        assert _section(blocks, "Read to answer") == expected_read, renderer
    assert "**not in the documents**" in text  # said plainly, and in bold


@dataclass
class _Source:
    classes: set[str]
    state_classes: set[str] = field(default_factory=set)
    state: str = ""
    quote: str = ""
    note: str = ""


class _SourceCards(HTMLParser):
    """The HTML report's sources as the page shows them: each card's classes, its state's
    classes and text, its quote and its note; and the passages listed as read."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sources: list[_Source] = []
        self.read: list[str] = []
        self.tags: dict[str, int] = {}
        self.title = ""
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        classes = set((dict(attrs).get("class") or "").split())
        if tag == "div" and "source" in classes:
            self.sources.append(_Source(classes))
        elif self.sources and tag == "span" and any(c.startswith("state-") for c in classes):
            self.sources[-1].state_classes = classes
            self._in = "state"
        elif self.sources and tag == "blockquote":
            self._in = "quote"
        elif self.sources and tag == "p" and "note" in classes:
            self._in = "note"
        elif tag == "ul" and "read" in classes:
            self._in = "read"
        elif tag == "li" and self._in == "read":
            self.read.append("")
        elif tag == "title" and not self.title:
            self._in = "title"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("span", "blockquote", "p", "ul", "title"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "title":
            self.title += data
        elif self._in == "read" and self.read:
            self.read[-1] += data
        elif self._in in ("state", "quote", "note"):
            card = self.sources[-1]
            setattr(card, self._in, getattr(card, self._in) + data)


def _chromium(page: str, tmp_path: Path) -> _SourceCards:
    """The page as Chromium shows it, with the proxy confirming it asked for nothing."""
    if CHROMIUM is None:
        pytest.fail("chromium is missing: make test installs it (apt-get install chromium)")
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    with recording_proxy() as (proxy, requests):
        dom = dump_dom(path, proxy, tmp_path / "chromium-profile")
        assert page_requests(requests) == []
    cards = _SourceCards()
    cards.feed(dom)
    return cards


def test_html_in_chromium_shows_each_source_state_and_what_was_read(
    store: Store, sourced: HealthReport, tmp_path: Path
) -> None:
    cards = _chromium(export(store, sourced.session_id, "html"), tmp_path)
    exact, fuzzy, made_up = cards.sources
    assert exact.classes == {"source", "ok"}
    assert exact.state_classes == {"state-ok"}
    assert exact.state == "found word for word"
    assert exact.quote == APPROVED
    assert fuzzy.classes == {"source", "check"}
    assert fuzzy.state.startswith("found approximately (score ")
    assert fuzzy.quote == MISSPELT
    assert made_up.classes == {"source", "warning"}
    assert made_up.state_classes == {"state-warning"}
    assert made_up.state == "not in the documents"
    assert made_up.quote == MADE_UP
    assert made_up.note.startswith(NOT_FOUND_NOTE)
    call_id = _sub_call(store, sourced.session_id)
    assert cards.read == [f"minutes.txt, characters 0–{READ_CHARS} · sub-call {call_id}"]


def _events(spans: list[Span]) -> list[tuple[str, int, dict[str, Any]]]:
    """`(name, time, attributes)` of every event, on the one span that has any."""
    with_events = [span for span in spans if span.events]
    assert len(with_events) == 1
    (span,) = with_events
    assert not span.parent_span_id  # the root call, which submitted the answer
    assert {event.time_unix_nano for event in span.events} == {span.end_time_unix_nano}
    return [(event.name, event.time_unix_nano, attrs(event)) for event in span.events]


def _sources_and_read(events: list[tuple[str, int, dict[str, Any]]]) -> list[dict[str, Any]]:
    names = [name for name, _, _ in events]
    assert names == ["rlm_desktop.source"] * 3 + ["rlm_desktop.read_to_answer"]
    return [attributes for _, _, attributes in events]


def test_otlp_json_and_protobuf_carry_an_event_per_source_and_passage(
    store: Store, sourced: HealthReport
) -> None:
    from_json = _events(spans_of(parsed_json(export(store, sourced.session_id, "otlp"))))
    request = ExportTraceServiceRequest.FromString(
        export_bytes(store, sourced.session_id, "otlp-proto")
    )
    assert _events(spans_of(request)) == from_json
    exact, fuzzy, made_up, read = _sources_and_read(from_json)
    start = MINUTES.text.index(APPROVED)
    assert exact == {
        "rlm_desktop.source.number": 1,
        "rlm_desktop.source.origin": "sources",
        "rlm_desktop.source.match": "exact",
        "rlm_desktop.source.score": 100.0,
        "rlm_desktop.source.document": "minutes.txt",
        "rlm_desktop.source.document_index": 0,
        "rlm_desktop.source.start": start,
        "rlm_desktop.source.end": start + len(APPROVED),
    }  # no quote: document text goes out only with include_content
    assert fuzzy["rlm_desktop.source.match"] == "fuzzy"
    assert 90 <= fuzzy["rlm_desktop.source.score"] < 100
    assert made_up["rlm_desktop.source.match"] == "not_found"
    assert made_up["rlm_desktop.source.note"].startswith(NOT_FOUND_NOTE)
    for absent in ("document", "document_index", "start", "end", "quote"):
        assert f"rlm_desktop.source.{absent}" not in made_up
    assert read == {
        "rlm_desktop.read_to_answer.document": "minutes.txt",
        "rlm_desktop.read_to_answer.document_index": 0,
        "rlm_desktop.read_to_answer.start": 0,
        "rlm_desktop.read_to_answer.end": READ_CHARS,
        "rlm_desktop.read_to_answer.call_id": _sub_call(store, sourced.session_id),
        "rlm_desktop.read_to_answer.used": True,
    }


def test_with_content_the_events_carry_the_quotes_and_reach_a_collector(
    store: Store, sourced: HealthReport
) -> None:
    content = export(store, sourced.session_id, "otlp", include_content=True)
    sources = _sources_and_read(_events(spans_of(parsed_json(content))))[:3]
    assert [s["rlm_desktop.source.quote"] for s in sources] == [APPROVED, MISSPELT, MADE_UP]
    receiver = OtlpReceiver().start()
    try:
        assert send_traces(store, sourced.session_id, receiver.endpoint) is None
    finally:
        receiver.stop()
    [request] = receiver.requests
    sent = _sources_and_read(_events(spans_of(request)))
    assert [s.get("rlm_desktop.source.match") for s in sent[:3]] == ["exact", "fuzzy", "not_found"]


def test_the_jsonl_metadata_line_carries_the_sources_and_stays_the_references(
    store: Store, sourced: HealthReport
) -> None:
    meta = json.loads(export(store, sourced.session_id, "jsonl").splitlines()[0])
    assert meta["sources"] == sourced.to_json()["sources"]
    assert [s["match"] for s in meta["sources"]] == ["exact", "fuzzy", "not_found"]
    loaded = RLMMetadata(**{key: meta[key] for key in RLMMetadata.__dataclass_fields__})
    assert loaded.to_dict()["root_model"] == meta["root_model"]


def test_control_text_cannot_change_the_markdown_report(
    store: Store, hostile: HealthReport, tmp_path: Path
) -> None:
    assert [s.match for s in hostile.sources] == ["exact", "not_found"]
    assert hostile.sources[0].document == HOSTILE.name
    assert hostile.read
    text = export(store, hostile.session_id, "md")
    _lint(text, tmp_path)
    structure = [line for line in text.splitlines() if re.match(r"#+ ", line)]
    for renderer, html in _renderings(text).items():
        parsed = _blocks(html)
        tags = {tag for tag, _ in parsed.tags}
        assert "script" not in tags, renderer
        assert "img" not in tags, renderer
        assert "b" not in tags, renderer
        assert "a" not in tags, renderer  # no link at all, javascript: or other
        headings = [text for tag, text in parsed.texts() if re.fullmatch(r"h\d", tag)]
        assert len(headings) == len(structure), (renderer, headings)
        assert not {"Heading", "Return", "Forged"} & {h.split(" ", 1)[0] for h in headings}
        sources = _section(parsed.texts(), "Sources")
        quotes = [quote for tag, quote in sources if tag == "blockquote"]
        assert quotes == [" ".join(CONTROL.split()), " ".join(FORGED.split())], renderer
        assert sources[0] == (
            "p",
            f"[1] found word for word · {HOSTILE.name}, characters 15–{15 + len(CONTROL.strip())}"
            " · given as a source",
        ), renderer
        [read] = [text for tag, text in _section(parsed.texts(), "Read to answer") if tag == "li"]
        assert read.startswith(f"{HOSTILE.name}, characters 0–"), renderer
        bold = set(re.findall(r"<strong>(.*?)</strong>", html))
        assert bold <= {"Status:", "[1]", "[2]", "not in the documents"}, renderer


def test_control_text_cannot_change_the_html_report(
    store: Store, hostile: HealthReport, tmp_path: Path
) -> None:
    cards = _chromium(export(store, hostile.session_id, "html"), tmp_path)
    assert cards.title == f"RLM session {hostile.session_id}"  # no script ran
    assert cards.tags.get("script", 0) == 0
    assert cards.tags.get("img", 0) == 0
    assert cards.tags.get("b", 0) == 0
    assert cards.tags.get("blockquote") == 2
    found, forged = cards.sources
    assert found.quote == CONTROL.strip().replace("\r", "\n")  # HTML reads a CR as a line end
    assert found.classes == {"source", "ok"}
    assert forged.quote == FORGED
    assert forged.classes == {"source", "warning"}
    assert cards.read[0].startswith(f"{HOSTILE.name}, characters 0–")
