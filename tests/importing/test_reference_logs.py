"""The official library's `RLMLogger` logs, made by really running it, imported as sessions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rlm_desktop.importing import import_trajectory
from rlm_desktop.store import Store
from tests.importing.reference_logs import QUESTION, reference_log
from tests.scripted_server import Reply, ScriptedServer

ANSWER_READY = "```repl\nanswer['content'] = {!r}\nanswer['ready'] = True\n```"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    started = ScriptedServer().start()
    yield started
    started.stop()


def test_a_depth_1_run_keeps_its_turns_sub_call_usage_and_answer(
    store: Store, server: ScriptedServer, tmp_path: Path
) -> None:
    log, raised = reference_log(server, tmp_path, [
        "Reading.\n```repl\npart = llm_query('sum the ledger')\nprint('sub said', part)\n```",
        "42 in all",
        ANSWER_READY.format("forty-two"),
    ])  # fmt: skip
    assert raised == ""
    imported = import_trajectory(store, log)
    assert (imported.source, imported.calls, imported.turns) == ("rlms", 2, 2)
    assert any("documents" in line for line in imported.left_out)
    shown = store.session(imported.session_id)
    session = shown["session"]
    assert (session["status"], session["answer"], session["query"]) == (
        "completed",
        "forty-two",
        QUESTION,
    )
    assert session["imported"]["format"] == "rlms"
    assert session["imported"]["file"] == log.name
    assert session["imported"]["left_out"] == list(imported.left_out)  # kept with the session
    again = import_trajectory(store, log)
    assert again.duplicate
    assert again.left_out == imported.left_out  # a reopened import still says what it lacks
    root, sub = shown["calls"]
    assert (root["kind"], sub["kind"], sub["parent_id"], sub["depth"]) == (
        "rlm",
        "llm",
        root["id"],
        2,
    )
    assert sub["model"] == "openai/test-model"
    assert sub["input_tokens"] > 0
    first, second = shown["turns"]
    assert first["stdout"] == "sub said 42 in all\n"
    assert "llm_query" in first["code"]
    assert "ready" in second["code"]
    assert first["duration_s"] > 0
    assert root["ended_at"] >= root["started_at"]


def test_a_depth_2_run_keeps_the_recursive_call_with_its_own_turns(
    store: Store, server: ScriptedServer, tmp_path: Path
) -> None:
    log, _ = reference_log(server, tmp_path, [
        "```repl\nr = rlm_query('What is in part 1?')\nprint(r)\n```",
        "```repl\nx = llm_query('sub q')\nanswer['content'] = 'child says ' + x\n"
        "answer['ready'] = True\n```",
        "sub reply",
        ANSWER_READY.format("deep"),
    ], max_depth=2)  # fmt: skip
    imported = import_trajectory(store, log)
    shown = store.session(imported.session_id)
    root, child, grandchild = shown["calls"]
    assert (child["kind"], child["parent_id"], grandchild["parent_id"]) == (
        "rlm",
        root["id"],
        child["id"],
    )
    assert [c["depth"] for c in shown["calls"]] == [1, 2, 3]
    assert shown["session"]["answer"] == "deep"
    assert shown["turns"][0]["stdout"] == "child says sub reply\n"
    child_turns = [turn for turn in shown["turns"] if turn["call_id"] == child["id"]]
    assert len(child_turns) == 1
    assert "llm_query('sub q')" in child_turns[0]["code"]
    # The reference counts the child's llm_query in the child's usage: kept once, on the sub-call.
    assert grandchild["input_tokens"] > 0
    assert child["input_tokens"] + grandchild["input_tokens"] == sum(
        c["input_tokens"] for c in shown["calls"]
    )


def test_a_block_that_raised_keeps_its_error(
    store: Store, server: ScriptedServer, tmp_path: Path
) -> None:
    log, _ = reference_log(server, tmp_path, [
        "```repl\nprint('before')\nprint(1 / 0)\n```", ANSWER_READY.format("done"),
    ])  # fmt: skip
    shown = store.session(import_trajectory(store, log).session_id)
    failing = shown["turns"][0]
    assert failing["error"] == "ZeroDivisionError: division by zero"
    assert failing["stdout"] == "before\n"
    assert shown["session"]["status"] == "completed"


def test_a_run_that_failed_is_an_error_that_says_the_log_does_not_say_why(
    store: Store, server: ScriptedServer, tmp_path: Path
) -> None:
    log, raised = reference_log(server, tmp_path, [
        "```repl\nprint('looking')\n```", Reply(status=400, content="model_not_found"),
    ])  # fmt: skip
    assert raised  # the reference raised; its log ends after the first iteration
    imported = import_trajectory(store, log)
    session = store.session(imported.session_id)["session"]
    assert session["status"] == "error"
    assert session["answer"] in ("", None)
    assert "without an answer" in session["error"]
    assert imported.turns == 1


def test_a_run_out_of_iterations_ends_max_turns_with_the_answer_it_was_asked_for(
    store: Store, server: ScriptedServer, tmp_path: Path
) -> None:
    log, _ = reference_log(server, tmp_path, [
        "```repl\nprint('still looking')\n```", "My best guess is 42.",
    ], max_iterations=1)  # fmt: skip
    imported = import_trajectory(store, log)
    session = store.session(imported.session_id)["session"]
    assert (session["status"], session["answer"], imported.turns) == (
        "max_turns",
        "My best guess is 42.",
        1,
    )
