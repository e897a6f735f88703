"""The export formats, checked by parsing them back."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from rlm_desktop.exports import FORMATS, export
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.exports.test_otlp import attrs, parsed_json, spans_of
from tests.exports.undecodable_name import LISTED, SPELLED, run_over_undecodable_name
from tests.scripted_server import ScriptedServer
from tests.store.synthetic import ANSWER, CELL_WORD

_NAME = re.compile(r"docs/caf[^./]{0,12}\.txt")
_ALWAYS_TEXT = ("jsonl", "md", "html")


@pytest.fixture
def run_id(record_run: Callable[..., str]) -> str:
    return record_run("run-x", turns=3, calls_per_turn=3, child_every=2)


def test_jsonl_is_a_metadata_line_then_one_line_per_root_turn(store: Store, run_id: str) -> None:
    lines = [json.loads(line) for line in export(store, run_id, "jsonl").splitlines()]
    meta, iterations = lines[0], lines[1:]
    assert meta["type"] == "metadata"
    assert {"root_model", "max_depth", "max_iterations", "backend", "environment_type"} <= set(meta)
    assert (meta["root_model"], meta["max_depth"], meta["max_iterations"]) == (
        "openai/test-model",
        2,
        20,
    )
    assert [it["iteration"] for it in iterations] == [1, 2, 3]
    for it in iterations:
        assert {"type", "timestamp", "prompt", "response", "code_blocks", "final_answer"} <= set(it)
        assert it["prompt"][0]["role"] == "user"
        block = it["code_blocks"][0]
        assert {"stdout", "stderr", "locals", "execution_time", "rlm_calls"} <= set(block["result"])
        assert len(block["result"]["rlm_calls"]) == 3
    assert iterations[-1]["final_answer"] == ANSWER
    assert iterations[0]["final_answer"] is None
    # The history is not repeated: each prompt holds only the new message.
    assert iterations[1]["prompt"] == [{"role": "user", "content": f"{CELL_WORD} 3"}]
    child = iterations[0]["code_blocks"][0]["result"]["rlm_calls"][1]
    assert (child["kind"], child["call_id"]) == ("rlm", "c2")
    trajectory = child["metadata"]["iterations"]
    assert trajectory[0]["code_blocks"][0]["result"]["rlm_calls"][0]["call_id"] == "c2.1"
    assert child["metadata"]["run_metadata"]["root_model"] == "openai/test-model"


def test_markdown_has_the_question_answer_settings_tree_and_code(store: Store, run_id: str) -> None:
    report = export(store, run_id, "md")
    for part in (
        "How many zebrafish",
        ANSWER,
        "## Settings",
        "## Cost",
        "## Call tree",
        "`c2.1`",
        "```python",
        f"print('{CELL_WORD}'",
        f"{CELL_WORD} 3",
    ):
        assert part in report, part


def _spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    (resource,) = document["resourceSpans"]
    (scope,) = resource["scopeSpans"]
    spans: list[dict[str, Any]] = scope["spans"]
    return spans


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def test_otlp_spans_follow_the_call_tree(store: Store, run_id: str) -> None:
    spans = _spans(json.loads(export(store, run_id, "otlp")))
    by_id = {span["spanId"]: span for span in spans}
    assert len(by_id) == len(spans)
    assert {span["traceId"] for span in spans} == {spans[0]["traceId"]}
    assert len(spans[0]["traceId"]) == 32
    assert all(len(s) == 16 for s in by_id)

    def owner_call(span: dict[str, Any]) -> str | None:
        """The call id of the nearest call span above `span`."""
        parent = by_id.get(span["parentSpanId"])
        while parent is not None and _attrs(parent).get("gen_ai.operation.name") == "execute_tool":
            parent = by_id.get(parent["parentSpanId"])
        return None if parent is None else _attrs(parent)["rlm_desktop.call_id"]

    calls = {c["id"]: c for c in store.session(run_id)["calls"]}
    call_spans = [
        s
        for s in spans
        if _attrs(s)["gen_ai.operation.name"] == "invoke_agent"
        or (_attrs(s)["gen_ai.operation.name"] == "chat" and "rlm_desktop.turn" not in _attrs(s))
    ]
    assert sorted(_attrs(s)["rlm_desktop.call_id"] for s in call_spans) == sorted(calls)
    for span in call_spans:
        attrs = _attrs(span)
        call = calls[attrs["rlm_desktop.call_id"]]
        assert owner_call(span) == call["parent_id"]
        expected = "invoke_agent" if call["kind"] == "rlm" else "chat"
        assert attrs["gen_ai.operation.name"] == expected
        assert attrs["gen_ai.request.model"] == "test-model"
        assert int(attrs["gen_ai.usage.input_tokens"]) == call["input_tokens"]
        assert attrs["rlm_desktop.cost_usd"] == call["cost_usd"]
        assert int(span["startTimeUnixNano"]) <= int(span["endTimeUnixNano"])
    tools = [s for s in spans if _attrs(s)["gen_ai.operation.name"] == "execute_tool"]
    # One cell per root turn, one in each of the four recursive children.
    assert len(tools) == 3 + 4
    assert {_attrs(s)["gen_ai.tool.name"] for s in tools} == {"repl"}
    # A sub-call hangs under the cell that made it.
    sub = next(s for s in call_spans if _attrs(s)["rlm_desktop.call_id"] == "c1")
    assert _attrs(by_id[sub["parentSpanId"]])["gen_ai.operation.name"] == "execute_tool"


def test_otlp_carries_text_only_when_asked(store: Store, run_id: str) -> None:
    bare = export(store, run_id, "otlp")
    full = export(store, run_id, "otlp", include_content=True)
    for text in ("Count zebrafish in c1", CELL_WORD, ANSWER):
        assert text not in bare
        assert text in full
    keys = {a for s in _spans(json.loads(full)) for a in _attrs(s)}
    assert {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments"} <= keys


def test_an_unknown_format_is_refused(store: Store, run_id: str) -> None:
    with pytest.raises(ValueError, match="jsonl, md, otlp"):
        export(store, run_id, "csv")


@pytest.fixture(scope="module")
def undecodable(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One real run over `caf\\xe9.txt` for the exports below: its data folder and session id."""
    folder = tmp_path_factory.mktemp("undecodable")
    server = ScriptedServer().start()
    try:
        ran = run_over_undecodable_name(server, folder, folder / "home")
    finally:
        server.stop()
    assert ran.returncode == 0, ran.stderr
    return folder / "home", json.loads(ran.stdout)["session_id"]


def _exported(home: Path, session_id: str, fmt: str, content: bool, out: Path) -> bytes:
    """`sessions export` through the CLI into `out`: its bytes, once it said nothing but that it
    wrote them (no traceback, no warning about a value it left out)."""
    flags = ["--include-content"] if content else []
    done = run_cli(
        "sessions", "export", session_id, "--format", fmt, "-o", str(out), *flags, home=home
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = out.read_bytes()
    assert done.stderr == f"wrote {out} ({len(data):,} bytes)\n"
    return data


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value; a string that is itself a JSON document (an OTLP attribute
    such as `gen_ai.input.messages`) is read as one."""
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    if not isinstance(value, str):
        return []
    try:
        inner = json.loads(value)
    except ValueError:
        return [value]
    return _strings(inner) if isinstance(inner, dict | list) else [value]


def _trace(fmt: str, data: bytes) -> ExportTraceServiceRequest:
    if fmt == "otlp":
        return parsed_json(data.decode("utf-8"))
    return ExportTraceServiceRequest.FromString(data)  # strings must be UTF-8 in proto3


def _texts(fmt: str, data: bytes) -> list[str]:
    """The texts an export holds, read as its readers read them."""
    if fmt in ("otlp", "otlp-proto"):
        request = _trace(fmt, data)
        resources = [attrs(rs.resource) for rs in request.resource_spans]  # type: ignore[arg-type]
        return _strings([*resources, *map(attrs, spans_of(request))])
    text = data.decode("utf-8")
    if fmt == "jsonl":
        return _strings([json.loads(line) for line in text.splitlines()])
    return [html.unescape(text) if fmt == "html" else text]


@pytest.mark.parametrize("content", [False, True], ids=["plain", "include-content"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_file_name_that_is_not_utf8_exports_in_every_format(
    undecodable: tuple[Path, str], tmp_path: Path, fmt: str, content: bool
) -> None:
    """Every format of a real run over `caf\\xe9.txt`, with and without `--include-content`, is
    valid UTF-8 (valid protobuf for otlp-proto) and shows the name one way: spelled
    `caf\\udce9.txt` in a text, with U+FFFD for the byte in a list of documents. With content, otlp
    once crashed with a traceback and otlp-proto printed one and left the messages out."""
    home, session_id = undecodable
    data = _exported(home, session_id, fmt, content, tmp_path / "export")

    shown = {name for text in _texts(fmt, data) for name in _NAME.findall(text)}
    assert shown <= {SPELLED, LISTED}
    assert (SPELLED in shown) == (fmt in _ALWAYS_TEXT or content)
    if fmt not in ("otlp", "otlp-proto") or not content:
        return
    spans = spans_of(_trace(fmt, data))
    chats = [attrs(s) for s in spans if s.name.startswith("chat ")]
    assert len(chats) == 2
    for chat in chats:
        system, first, *_rest = json.loads(chat["gen_ai.input.messages"])
        assert system["role"] == "system"
        assert SPELLED in first["parts"][0]["content"]
    if fmt == "otlp-proto":  # the same trace as OTLP/JSON, no attribute left out
        twin = _trace("otlp", _exported(home, session_id, "otlp", True, tmp_path / "twin"))
        assert sorted(map(attrs, spans), key=str) == sorted(map(attrs, spans_of(twin)), key=str)
