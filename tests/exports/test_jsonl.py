"""The JSONL export, read with the reference implementation's own types (`rlms`)."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from rlm.core.types import CodeBlock, REPLResult, RLMChatCompletion, RLMIteration, RLMMetadata

from rlm_desktop.exports import export
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.conftest import TEST_MODEL
from tests.engine.scripting import DOCUMENT, QUERY, make_run, repl, scripted
from tests.exports.undecodable_name import LISTED, SPELLED, run_over_undecodable_name
from tests.scripted_server import Reply, ScriptedServer
from tests.store.real_sessions import CHILD_Q, FANOUT, GRANDCHILD_Q, final, real_sessions

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
    system, question = deeper.metadata["iterations"][0]["prompt"]
    assert system["role"] == "system"
    assert question["content"].startswith(f"Question: {GRANDCHILD_Q}\n")
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


# What the reference's visualizer (its TypeScript log parser and views) reads from a file, stated as
# facts about ours. It takes the question from the first user message of the first iteration that
# is 51 to 499 characters long; marks an iteration as failed by a non-empty `stderr`; and shows a
# sub-call's `response`, token counts and `execution_time` as they are.

SUB_CALLS_FAIL = scripted(
    {CHILD_Q: [Reply(status=400, content="model_not_found: no child model")]},
    sub=Reply(status=400, content="model_not_found: no sub model"),
    root=[
        repl(
            "for ask in (llm_query, rlm_query):\n"
            "    try:\n"
            f"        ask({CHILD_Q!r})\n"
            "    except Exception as error:\n"
            "        print(type(error).__name__)"
        ),
        final("answered without them"),
    ],
)


@pytest.fixture(scope="module")
def failed_sub_calls(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The JSONL lines of a run whose `llm_query` and `rlm_query` are both refused."""
    home = tmp_path_factory.mktemp("failed-sub-calls")

    async def record(server: ScriptedServer, store: Store) -> str:
        run = make_run(server)
        recorder = store.record(run, documents=[DOCUMENT])
        await run.execute()
        recorder.close()
        return run.run_id

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RLM_DESKTOP_HOME", str(home))
        server = ScriptedServer().start()
        store = Store(Path(home) / "sessions.db")
        try:
            server.respond_with(SUB_CALLS_FAIL)
            session_id = asyncio.run(record(server, store))
            return [json.loads(line) for line in export(store, session_id, "jsonl").splitlines()]
        finally:
            store.close()
            server.stop()


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_iterations(iterations: list[dict[str, Any]]) -> None:
    for it in iterations:
        assert isinstance(it["iteration"], int)
        datetime.fromisoformat(it["timestamp"])
        assert it["prompt"]
        assert all(
            isinstance(m["role"], str) and isinstance(m["content"], str) for m in it["prompt"]
        )
        assert isinstance(it["response"], str)
        assert it["final_answer"] is None or isinstance(it["final_answer"], str)
        assert it["iteration_time"] is None or _is_number(it["iteration_time"])
        for block in it["code_blocks"]:
            result = block["result"]
            assert isinstance(block["code"], str)
            assert isinstance(result["stdout"], str)
            assert isinstance(result["stderr"], str)
            assert isinstance(result["locals"], dict)
            assert _is_number(result["execution_time"])
            for call in result["rlm_calls"]:
                assert isinstance(call["prompt"], str)
                assert isinstance(call["response"], str)
                assert all(
                    _is_number(call[key])
                    for key in ("prompt_tokens", "completion_tokens", "execution_time")
                )
                _check_iterations(call.get("metadata", {}).get("iterations", []))


@pytest.mark.parametrize("shape", SHAPES)
def test_every_field_the_visualizer_reads_is_there_with_its_type(
    real_sessions: Sessions, shape: str
) -> None:
    _meta, *iterations = lines(real_sessions, shape)
    assert iterations
    _check_iterations(iterations)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_first_user_message_asks_the_question_at_a_length_the_visualizer_shows(
    real_sessions: Sessions, shape: str
) -> None:
    _meta, first, *_ = lines(real_sessions, shape)
    opening = next(m["content"] for m in first["prompt"] if m["role"] == "user")
    assert 50 < len(opening) < 500
    assert opening.startswith(f"Question: {QUERY}\n")


def test_a_run_refused_before_any_code_shows_its_error_as_the_reply(
    real_sessions: Sessions,
) -> None:
    meta, *iterations = lines(real_sessions, "failed")
    (only,) = iterations
    assert only["code_blocks"] == []
    assert only["response"] == f"Error: {meta['error']}"
    assert "model_not_found" in only["response"]


@pytest.mark.parametrize("shape", ["failed", "timeout", "cancelled"])
def test_the_turn_a_run_ended_in_counts_its_time_until_the_end(
    real_sessions: Sessions, shape: str
) -> None:
    meta, *iterations = lines(real_sessions, shape)
    last = iterations[-1]
    assert _is_number(last["iteration_time"])
    assert last["iteration_time"] > 0
    started = datetime.fromisoformat(last["timestamp"])
    assert started >= datetime.fromisoformat(meta["timestamp"])


def test_failed_sub_calls_reply_with_their_error_as_the_reference_writes_them(
    failed_sub_calls: list[dict[str, Any]],
) -> None:
    _meta, *iterations = failed_sub_calls
    (block,) = iterations[0]["code_blocks"]
    assert block["result"]["stdout"].split() == ["LLMCallError", "RLMChildError"]
    sub, child = block["result"]["rlm_calls"]
    for call, why in ((sub, "no sub model"), (child, "no child model")):
        assert call["response"].startswith("Error: ")
        assert why in call["response"]
    assert iterations[-1]["final_answer"] == "answered without them"
    _check_iterations(iterations)


def test_a_file_name_that_is_not_utf8_exports_as_utf8_the_reference_reads(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    """A real run over `caf\\xe9.txt` (Latin-1 bytes, a lone surrogate to Python) through the CLI:
    the name is in the first user message, in a variable and in what a cell printed. JSONL once
    crashed on it with a traceback; it now writes it as the other formats do (`caf\\udce9.txt`
    spelled out, as the tables and the Markdown show it)."""
    ran = run_over_undecodable_name(scripted_server, tmp_path, isolated_home)
    assert ran.returncode == 0, ran.stderr
    session_id = json.loads(ran.stdout)["session_id"]
    out = tmp_path / "run.jsonl"
    exported = run_cli(
        "sessions", "export", session_id, "--format", "jsonl", "-o", str(out), home=isolated_home
    )
    markdown = run_cli("sessions", "export", session_id, "--format", "md", home=isolated_home)

    assert exported.returncode == 0, exported.stderr
    assert "Traceback" not in exported.stderr
    meta, *entries = [json.loads(line) for line in out.read_bytes().decode("utf-8").splitlines()]
    assert SPELLED in markdown.stdout
    assert [document["name"] for document in meta["documents"]] == [LISTED]
    first, _second = entries
    assert SPELLED in next(m["content"] for m in first["prompt"] if m["role"] == "user")
    (block,) = first["code_blocks"]
    assert block["result"]["stdout"] == f"{SPELLED}\n"
    assert block["result"]["locals"] == {"name": SPELLED}
    trajectory = RLMChatCompletion.from_dict({
        "root_model": meta["root_model"], "prompt": meta["query"], "response": meta["answer"],
        "usage_summary": {"model_usage_summaries": {}}, "execution_time": 0.0,
        "metadata": {"run_metadata": meta, "iterations": entries},
    })  # fmt: skip
    assert trajectory.response == "7"
    metadata = RLMMetadata(**{key: meta[key] for key in RLMMetadata.__dataclass_fields__})
    assert metadata.to_dict()["root_model"] == TEST_MODEL
    for entry in entries:
        blocks = [CodeBlock(b["code"], REPLResult(**b["result"])) for b in entry["code_blocks"]]
        iteration = RLMIteration(
            entry["prompt"], entry["response"], blocks, entry["final_answer"],
            entry["iteration_time"],
        )  # fmt: skip
        assert json.loads(json.dumps(iteration.to_dict())) == {
            key: entry[key] for key in iteration.to_dict()
        }
