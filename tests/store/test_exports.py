"""The three export formats, checked by parsing them back."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from rlm_desktop.store import Store, export
from tests.store.synthetic import ANSWER, CELL_WORD


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
