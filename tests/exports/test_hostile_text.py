"""Every export of a session holding the nastiest text we know (`hostile_text`), read back by
the programs that read each format: valid UTF-8, nothing raw that a reader would act on or choke
on, and each hostile character marked, the same way in every format, in every field it shows.

A lone surrogate once made the Markdown, HTML and `otlp --include-content` exports exit 1 with
`UnicodeEncodeError`; NULs, controls and bidi overrides went into every file raw. (The window's
Export button writes `exports.export_bytes`, as `sessions export` does.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from rlm.core.types import CodeBlock, REPLResult, RLMChatCompletion, RLMIteration, RLMMetadata

from rlm_desktop.exports import FORMATS, send_traces
from rlm_desktop.paths import HOME_ENV
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.exports.hostile_text import (
    CORE,
    FIRM,
    KEPT,
    MARKUP,
    SURROGATES,
    hostile_session,
    marked,
    share,
)
from tests.exports.otlp_receiver import OtlpReceiver
from tests.exports.test_otlp import parsed_json, spans_of
from tests.scripted_server import ScriptedServer

UNSAFE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2066-\u2069\ud800-\udfff\ufdd0-\ufdef"
    + "".join(
        f"{chr(plane + 0xFFFE)}{chr(plane + 0xFFFF)}" for plane in range(0, 0x110000, 0x10000)
    )
    + "]"
)
"""What no export may hold raw: the code points HTML's parser reports as errors in its input
(controls other than whitespace, noncharacters, surrogates), every other C0 and C1 control
(a terminal acts on them; `str.splitlines` breaks a JSON line at some), bidi controls (they
reorder what a reviewer reads: code that is not what it seems) and line and paragraph separators."""
WITHOUT_SURROGATES = marked(CORE.removeprefix(SURROGATES))
SHOWN = {
    **dict.fromkeys(
        ("QUESTION", "ANSWER", "SOURCE", "STDOUT", "STDERR", "ERROR", "PROMPT", "SETTING",
         "SETTINGKEY", "APIBASE"),
        marked(CORE),
    ),
    **dict.fromkeys(
        ("REPLY", "SUBREPLY", "CODE", "SESSIONERR", "PROFILE", "MODEL"), WITHOUT_SURROGATES
    ),
    "CALLERR": marked(FIRM) + " ",  # the engine makes a provider's error one line, spaces one
    "DOCNAME": "\ufffd\ufffd\ufffd|\ufffd|\ufffd" + WITHOUT_SURROGATES,  # a list of documents
}  # fmt: skip
"""How each field's hostile characters read in an export: marked (lone surrogates spelled as the
database spells them, `\\udce9`), where the field could carry them."""
IN_TEXT = {"QUESTION", "ANSWER", "SOURCE", "REPLY", "CODE", "STDOUT", "STDERR"}
CARRIED = {
    "md": IN_TEXT | {"ERROR", "CALLERR", "SESSIONERR", "PROFILE", "SETTING", "SETTINGKEY",
                     "MODEL", "DOCNAME"},
    "html": IN_TEXT | {"ERROR", "CALLERR", "SESSIONERR", "PROFILE", "SETTING", "SETTINGKEY",
                       "MODEL", "DOCNAME", "PROMPT", "SUBREPLY"},
    "jsonl": IN_TEXT | {"ERROR", "CALLERR", "SESSIONERR", "MODEL", "DOCNAME", "PROMPT",
                        "SUBREPLY", "APIBASE"},
    "otlp": {"MODEL"},
    "otlp+content": IN_TEXT | {"PROMPT", "SUBREPLY", "MODEL"},
}  # fmt: skip
"""The fields each export shows (OTLP shows text only with `--include-content`)."""


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The hostile run, recorded in a data folder of its own, then shared: (folder, session id)."""
    home = tmp_path_factory.mktemp("hostile") / "home"
    server = ScriptedServer().start()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(HOME_ENV, str(home))
        store = Store(home / "sessions.db")
        try:
            session_id = asyncio.run(hostile_session(store, server))
        finally:
            store.close()
            server.stop()
    assert session_id
    share(home / "sessions.db", session_id)
    return home, session_id


class _Page(HTMLParser):
    """A page's elements by tag and its text, as a browser's parser reads them."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: dict[str, int] = {}
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.text.extend(value or "" for _name, value in attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys too; a string that is a JSON document itself (an OTLP
    attribute such as `gen_ai.input.messages`) read as one as well."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value
        if value[:1] in ("[", "{"):
            with contextlib.suppress(ValueError):
                yield from _strings(json.loads(value))


def _read_jsonl(text: str) -> list[str]:
    """The JSONL export read as Python's `json` and the reference implementation (`rlms`) read
    it; its strings."""
    assert len(text.splitlines()) == text.count("\n")  # no line broken inside a string
    meta, *entries = [json.loads(line) for line in text.splitlines()]
    RLMMetadata(**{key: meta[key] for key in RLMMetadata.__dataclass_fields__})
    for entry in entries:
        blocks = [
            CodeBlock(b["code"], REPLResult(**{**b["result"], "rlm_calls": [
                RLMChatCompletion.from_dict(call) for call in b["result"]["rlm_calls"]
            ]}))
            for b in entry["code_blocks"]
        ]  # fmt: skip
        iteration = RLMIteration(
            entry["prompt"], entry["response"], blocks, entry["final_answer"],
            entry["iteration_time"],
        )  # fmt: skip
        json.dumps(iteration.to_dict())
    return list(_strings([meta, *entries]))


def _read_trace(request: ExportTraceServiceRequest) -> list[str]:
    """A trace's strings: the resource's and spans' attributes, span and event names, status
    messages (each attribute as OpenTelemetry's own protobuf definitions read it)."""
    from google.protobuf.json_format import MessageToDict

    texts = [json.dumps(MessageToDict(request), ensure_ascii=False)]
    for span in spans_of(request):
        texts.append(span.name)
        texts.append(span.status.message)
        for kv in [*span.attributes, *(a for e in span.events for a in e.attributes)]:
            texts.extend(_strings(MessageToDict(kv.value)))
    for resource in request.resource_spans:
        for kv in resource.resource.attributes:
            texts.extend(_strings(MessageToDict(kv.value)))
    return texts


def _read(fmt: str, data: bytes) -> list[str]:
    """The texts a reader of `fmt` sees in `data`, once its own parser took it without error."""
    if fmt == "otlp-proto":
        return _read_trace(ExportTraceServiceRequest.FromString(data))  # proto3 checks UTF-8
    text = data.decode("utf-8")  # strict: a lone surrogate or a stray byte fails here
    assert not UNSAFE.findall(text)
    if fmt == "otlp":
        return _read_trace(parsed_json(text))
    if fmt == "jsonl":
        return _read_jsonl(text)
    if fmt == "md":
        text = MarkdownIt("commonmark").enable("table").render(text)
    page = _Page(text)
    assert not {"script", "textarea", "img", "iframe", "object"} & set(page.tags)
    if fmt == "html":  # one page still (each bar of the timeline has a title of its own)
        assert (page.tags["html"], page.tags["style"], page.tags["body"]) == (1, 1, 1)
    return page.text


def _check(texts: list[str], carried: set[str]) -> None:
    """No text holds a character raw that it must not; every field `carried` shows its hostile
    characters marked, and what is text kept as it is."""
    unsafe = {f"U+{ord(c):04X}" for text in texts for c in UNSAFE.findall(text)}
    assert not unsafe
    seen = "\n".join(texts)
    assert {tag for tag in carried if f"{tag}⟦{SHOWN[tag]}⟧" not in seen} == set()
    shown = [tag for tag in carried if f"{tag}⟦{SHOWN[tag]}⟧{KEPT}" in seen]
    assert shown  # a byte order mark, zero-width characters and emoji are kept as they are
    if carried & IN_TEXT:
        assert MARKUP in seen  # and markup is text


@pytest.mark.parametrize("content", [False, True], ids=["plain", "include-content"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_export_writes_hostile_text_safely_and_marked(
    shared: tuple[Path, str], tmp_path: Path, fmt: str, content: bool
) -> None:
    home, session_id = shared
    out = tmp_path / "export"
    flags = ["--include-content"] if content else []
    done = run_cli(
        "sessions", "export", session_id, "--format", fmt, "-o", str(out), *flags, home=home
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"wrote {out} ({out.stat().st_size:,} bytes)\n"
    kind = "otlp+content" if fmt.startswith("otlp") and content else fmt.removesuffix("-proto")
    _check(_read(fmt, out.read_bytes()), CARRIED[kind])


@pytest.mark.parametrize("content", [False, True], ids=["plain", "include-content"])
def test_traces_sent_to_a_collector_carry_hostile_text_safely_and_marked(
    shared: tuple[Path, str], content: bool
) -> None:
    home, session_id = shared
    receiver = OtlpReceiver().start()
    store = Store(home / "sessions.db")
    try:
        assert send_traces(store, session_id, receiver.endpoint, content) is None
    finally:
        store.close()
        receiver.stop()
    (request,) = receiver.requests
    _check(_read_trace(request), CARRIED["otlp+content" if content else "otlp"])
