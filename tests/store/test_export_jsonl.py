"""The JSONL export, read with the reference implementation's own types (`rlms`)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from rlm.core.types import RLMChatCompletion

from rlm_desktop.store import Store, export
from tests.store.real_sessions import FANOUT, GRANDCHILD_Q, real_sessions

__all__ = ["real_sessions"]

Sessions = tuple[Store, dict[str, str]]
SHAPES = ("fanout", "depth2", "failed", "timeout", "cancelled")


def lines(sessions: Sessions, shape: str) -> list[dict[str, Any]]:
    store, ids = sessions
    return [json.loads(line) for line in export(store, ids[shape], "jsonl").splitlines()]


def sub_calls(iterations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        call for it in iterations for b in it["code_blocks"] for call in b["result"]["rlm_calls"]
    ]


@pytest.mark.parametrize("shape", SHAPES)
def test_the_metadata_line_is_the_references_with_the_runs_error(
    real_sessions: Sessions, shape: str
) -> None:
    meta, *iterations = lines(real_sessions, shape)
    assert meta["type"] == "metadata"
    assert {"root_model", "max_depth", "max_iterations", "backend", "backend_kwargs"} <= set(meta)
    assert meta["backend_kwargs"]["base_url"].startswith("http://127.0.0.1:")
    assert (meta["error"] is None) == (shape in ("fanout", "depth2"))
    for entry in (meta, *iterations):
        stamp = datetime.fromisoformat(entry["timestamp"])
        assert stamp.tzinfo is None  # as the reference writes them: datetime.now().isoformat()


def test_sub_calls_load_as_the_references_completions(real_sessions: Sessions) -> None:
    _meta, *iterations = lines(real_sessions, "fanout")
    calls = sub_calls(iterations)
    assert len(calls) == FANOUT
    for call in calls:
        loaded = RLMChatCompletion.from_dict(call)
        assert loaded.response == "part read"
        assert loaded.usage_summary.total_input_tokens > 0
        assert loaded.to_dict()["usage_summary"] == call["usage_summary"]


def test_child_trajectories_sit_in_metadata_as_the_reference_keeps_them(
    real_sessions: Sessions,
) -> None:
    _meta, *iterations = lines(real_sessions, "depth2")
    (child,) = sub_calls(iterations)
    loaded = RLMChatCompletion.from_dict(child)
    assert loaded.metadata is not None
    assert loaded.metadata["run_metadata"]["root_model"] == "openai/test-model"
    child_turns = loaded.metadata["iterations"]
    (grandchild,) = sub_calls(child_turns)
    deeper = RLMChatCompletion.from_dict(grandchild)
    assert deeper.metadata is not None
    assert deeper.metadata["iterations"][0]["prompt"][0]["content"] == GRANDCHILD_Q
    errors = [
        b["result"]["stderr"] for it in deeper.metadata["iterations"] for b in it["code_blocks"]
    ]
    assert any("ZeroDivisionError" in e for e in errors)


def test_the_block_that_answered_carries_the_final_answer(real_sessions: Sessions) -> None:
    _meta, *iterations = lines(real_sessions, "fanout")
    last = iterations[-1]
    assert last["final_answer"] == "six parts read"
    assert [b["result"]["final_answer"] for b in last["code_blocks"]] == ["six parts read"]
    assert all(
        b["result"]["final_answer"] is None for it in iterations[:-1] for b in it["code_blocks"]
    )


@pytest.mark.parametrize("shape", ["timeout", "cancelled"])
def test_a_run_that_ended_mid_turn_keeps_the_reply_and_the_unfinished_code(
    real_sessions: Sessions, shape: str
) -> None:
    _meta, *iterations = lines(real_sessions, shape)
    last = iterations[-1]
    assert "Counting slowly." in last["response"]
    (block,) = last["code_blocks"]
    assert "time.sleep(60)" in block["code"]
    assert f"the run ended ({shape})" in block["result"]["stderr"]
    assert last["final_answer"] is None
