"""Runs of the real `rlm-desktop run` on the real model: whatever it writes, each run ends in a
status it can account for, its replies stream, a root reply stops at its code, and the saved
session tells the same ending."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import profiles
from rlm_desktop.engine.constrained_replies import regex
from rlm_desktop.engine.parsing import extract_code_blocks
from tests.real.conftest import (
    HELD,
    ROOT_OUTPUT_TOKENS,
    assert_streamed,
    assert_truthful_ending,
    cap_replies,
    rlm_desktop,
    run_json,
)
from tests.real.report import Report, saved_run
from tests.real.server import LocalServer

pytestmark = pytest.mark.real

QUESTION = "Which city is the Blue Owl bookshop in?"
NOTES = """\
Shop notes, spring.
The Red Fox bakery is in Leeds and opens at seven.
The Blue Owl bookshop is in Bristol, on King Street.
The Green Door cafe is in York and closes on Mondays.
"""
BLOCK_TO_COPY = f"{QUESTION} Begin with:\n```repl\nprint(context[:300])\n```"
"""A question that hands the model a code block: this model echoes what it reads, so it writes a
complete block early, and the app has a reply to stop at its code."""
ROOT_TOKENS_TO_STOP_SHORT_OF = 768
"""Room for the model to write far past its block, as it would without stop-at-code."""
UNSTOPPED = "gemma-unstopped"
"""A copy of the `gemma` profile whose replies are read to their end (`code_stop` "whole-reply")."""
AFTER_CODE = "gemma-after-code"
"""A copy of the `gemma` profile that runs every block of a reply (`code_stop` "after-code")."""


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text(NOTES, encoding="utf-8")
    return path


def test_a_direct_call_is_answered_by_the_listed_model_and_saved(
    local_server: LocalServer, real_home: Path, notes: Path, report: Report
) -> None:
    done, result = run_json(
        real_home, local_server, "--mode", "direct", "--doc", str(notes), "--query", QUESTION
    )
    report.session("direct call", result["session_id"])
    assert result["status"] == "completed", done.stderr
    saved = assert_truthful_ending(real_home, result, done.returncode)
    assert saved["session"]["model"] == local_server.model
    assert {call["model"] for call in saved["calls"]} == {local_server.model}
    assert_streamed(result["session_id"])
    shown = rlm_desktop(real_home, "sessions", "show", result["session_id"], timeout=60)
    assert shown.returncode == 0, shown.stderr
    short = Path(local_server.model_id).stem
    assert f"Model: {short} ({local_server.model})" in shown.stdout, "the file's name, then the id"


@pytest.mark.parametrize("profile", [None, "default"])
def test_an_rlm_run_of_two_turns_ends_with_an_answer_or_out_of_turns(
    local_server: LocalServer, real_home: Path, notes: Path, report: Report, profile: str | None
) -> None:
    chosen = ["--profile", profile] if profile else []
    done, result = run_json(
        real_home, local_server, "--mode", "rlm", *chosen, "--max-turns", "2",
        "--max-depth", "1", "--doc", str(notes), "--query", QUESTION,
    )  # fmt: skip
    report.session(
        f"rlm run, profile {profile or 'by name'}, at most 2 turns", result["session_id"]
    )
    saved = assert_truthful_ending(real_home, result, done.returncode)
    assert result["status"] in ("completed", "max_turns"), result["error"]
    assert result["turns"] <= 2
    assert saved["session"]["profile"] == (profile or "gemma")
    assert_streamed(result["session_id"])


def test_a_real_models_code_runs_in_the_wasm_sandbox(
    local_server: LocalServer, real_home: Path, notes: Path, report: Report
) -> None:
    done, result = run_json(
        real_home, local_server, "--mode", "rlm", "--sandbox", "wasm", "--max-turns", "3",
        "--max-depth", "1", "--doc", str(notes), "--query", BLOCK_TO_COPY,
    )  # fmt: skip
    report.session("rlm run in the wasm sandbox, at most 3 turns", result["session_id"])
    saved = assert_truthful_ending(real_home, result, done.returncode)
    assert result["status"] in ("completed", "max_turns"), result["error"]
    assert result["sandbox"].startswith("wasm+wasmtime")
    ran = [turn for turn in saved["turns"] if turn["code"].strip()]
    assert ran, "the model wrote no code to run"
    assert any(turn["stdout"] or turn["error"] for turn in ran)


def test_a_root_reply_is_read_up_to_its_first_complete_code_block(
    local_server: LocalServer, real_home: Path, notes: Path, report: Report
) -> None:
    cap_replies(ROOT_TOKENS_TO_STOP_SHORT_OF)
    done, result = run_json(
        real_home, local_server, "--mode", "rlm", "--max-turns", "1", "--max-depth", "1",
        "--doc", str(notes), "--query", BLOCK_TO_COPY,
    )  # fmt: skip
    report.session("rlm run handed a code block to copy", result["session_id"])
    assert_truthful_ending(real_home, result, done.returncode)
    detail, responses = saved_run(result["session_id"])
    (root,) = detail.roots()
    cut = [r for r in detail.requests_of(root["id"]) if responses[r["id"]].cut == "code"]
    assert cut, "the model wrote no complete code block to stop at (see the report)"
    for request in cut:
        assert len(extract_code_blocks(request["content"])) == 1
        assert request["content"].rstrip().endswith("```")
        assert request["output_tokens"] < ROOT_TOKENS_TO_STOP_SHORT_OF
        assert len(detail.cells_of(root["id"], request["turn"])) == 1


def test_stop_at_code_saves_what_the_model_writes_past_its_block(
    local_server: LocalServer, real_home: Path, notes: Path, report: Report
) -> None:
    """The same first turn with and without stop-at-code: without it the reply runs on past
    its block, never cut there; the report puts both turns' tokens and seconds side by side."""
    cap_replies(ROOT_TOKENS_TO_STOP_SHORT_OF)
    index = profiles.read_index(paths.user_profiles_dir())
    index[UNSTOPPED] = {**index["gemma"], "patterns": [], "code_stop": "whole-reply"}
    profiles.write_index(paths.user_profiles_dir(), index)
    turns = {}
    for profile in ("gemma", UNSTOPPED):
        done, result = run_json(
            real_home, local_server, "--mode", "rlm", "--profile", profile, "--max-turns", "1",
            "--max-depth", "1", "--doc", str(notes), "--query", BLOCK_TO_COPY,
        )  # fmt: skip
        report.session(
            f"rlm run handed a code block to copy, profile {profile}", result["session_id"]
        )
        assert_truthful_ending(real_home, result, done.returncode)
        detail, responses = saved_run(result["session_id"])
        (root,) = detail.roots()
        first = detail.requests_of(root["id"])[0]
        turns[profile] = (first, responses[first["id"]])
    unstopped, unstopped_response = turns[UNSTOPPED]
    assert unstopped_response.cut != "code"
    report.stop_at_code(turns)


def test_the_real_model_under_the_old_rule_and_the_new(
    local_server: LocalServer, real_home: Path, notes: Path, report: Report
) -> None:
    """The same three-turn run with one block a turn (`gemma`'s rule) and with every block run
    (`after-code`): each ends truthfully, and no turn of the old rule ran more than one block;
    the report sets turns, tokens and seconds side by side with what the model wrote."""
    cap_replies(ROOT_TOKENS_TO_STOP_SHORT_OF)
    index = profiles.read_index(paths.user_profiles_dir())
    index[AFTER_CODE] = {**index["gemma"], "patterns": [], "code_stop": "after-code"}
    profiles.write_index(paths.user_profiles_dir(), index)
    results = {}
    for rule, profile in (("first-block", "gemma"), ("after-code", AFTER_CODE)):
        done, result = run_json(
            real_home, local_server, "--mode", "rlm", "--profile", profile, "--max-turns", "3",
            "--max-depth", "1", "--doc", str(notes), "--query", QUESTION,
        )  # fmt: skip
        report.session(f"rlm run, code_stop {rule}, at most 3 turns", result["session_id"])
        assert_truthful_ending(real_home, result, done.returncode)
        assert result["status"] in ("completed", "max_turns"), result["error"]
        results[rule] = result
    report.code_stop_rules(results)
    detail, _responses = saved_run(results["first-block"]["session_id"])
    (root,) = detail.roots()
    assert all(len(detail.cells_of(root["id"], turn)) <= 1 for turn in range(3))


def test_a_constrained_run_s_every_turn_is_prose_and_one_block(
    local_server: LocalServer, real_home: Path, notes: Path, report: Report
) -> None:
    """The grammar reaches llama.cpp and holds: each RLM turn's reply, unless cut at its output
    limit (by the server or the app: a block the grammar opened may still be open), is prose and
    exactly one `repl` block."""
    done, result = run_json(
        real_home, local_server, "--mode", "rlm", "--profile", f"gemma{HELD}", "--max-turns", "2",
        "--max-depth", "1", "--doc", str(notes), "--query", QUESTION,
    )  # fmt: skip
    report.session("rlm run, replies held to prose and one block", result["session_id"])
    saved = assert_truthful_ending(real_home, result, done.returncode)
    assert saved["session"]["settings"]["constrained_replies"] == "llama-cpp-python grammar"
    detail, responses = saved_run(result["session_id"])
    (root,) = detail.roots()
    turns = [r for r in detail.requests_of(root["id"]) if r["content"] and r["turn"] is not None]
    whole = [r for r in turns if not r["truncated"] and responses[r["id"]].cut != "max_tokens"]
    shape = regex(ROOT_OUTPUT_TOKENS)
    for request in whole[: result["turns"]]:
        content = request["content"]  # cut at its fence's line end, or ended by the grammar
        assert re.fullmatch(shape, content if content.endswith("\n") else content + "\n"), content
        assert len(extract_code_blocks(content)) == 1, "the app reads the block the grammar made"
        assert len(detail.cells_of(root["id"], request["turn"])) == 1
