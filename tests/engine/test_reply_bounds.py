"""Replies are bounded: the output-token cap goes with every request, and a reply larger than that
cap can take (hundreds of megabytes, or a provider ignoring it) is one clear error for its call,
read no further than the call's size cap."""

from __future__ import annotations

from pathlib import Path

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import CallFinished, LLMResponded, TurnExecuted
from rlm_desktop.engine.reply_limit import REPLY_LIMIT_BYTES
from tests.cli import run_cli_measured
from tests.engine.scripting import QUERY, TEST_MODEL, make_run, of_type, repl, run_to_end, scripted
from tests.scripted_server import Reply, ScriptedServer

HUGE = 300 * 1024 * 1024
RSS_BOUND_KB = 1024 * 1024
"""The app under test must stay below 1 GB however large the reply (it grew to 24 GB)."""
TOO_LARGE = "more than 1,024 output tokens (the max_tokens it was sent) can take"


async def test_an_oversized_sub_call_reply_is_one_error_and_the_run_goes_on(
    scripted_server: ScriptedServer,
) -> None:
    cell = repl(
        "try:\n"
        "    llm_query('tell me everything')\n"
        "except LLMCallError as error:\n"
        "    print('failed:', error)"
    )
    scripted_server.respond_with(
        scripted({QUERY: [cell, repl("FINAL('went on')")]}, sub=Reply(body_bytes=HUGE))
    )
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(max_tokens=10**6)))

    assert (result.status, result.answer) == ("completed", "went on")
    shown = of_type(events, TurnExecuted)[0].observation
    assert "failed:" in shown
    assert TOO_LARGE in shown
    (failed,) = [e for e in of_type(events, CallFinished) if e.status == "error"]
    assert TOO_LARGE in (failed.error or "")
    answered = sum(e.input_tokens + e.output_tokens for e in of_type(events, LLMResponded))
    assert result.input_tokens + result.output_tokens > answered  # the oversized reply is paid
    assert REPLY_LIMIT_BYTES < HUGE


async def test_every_request_carries_the_output_token_cap(scripted_server: ScriptedServer) -> None:
    cell = repl("print(llm_query_batched(['one', 'two']))")
    scripted_server.respond_with(scripted({QUERY: [cell, repl("FINAL('ok')")]}))
    await run_to_end(make_run(scripted_server))

    requests = scripted_server.chat_requests()
    assert len(requests) == 4
    assert all(isinstance(r.get("max_tokens"), int) and r["max_tokens"] > 0 for r in requests)


def test_a_300_mb_reply_keeps_the_app_small_and_ends_the_run_truthfully(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("The meeting is on Tuesday.\n")
    scripted_server.enqueue(Reply(body_bytes=HUGE, chunked=True))
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as stdout, err.open("w") as stderr:
        code, peak_kb = run_cli_measured(
            "run", "--query", QUERY, "--doc", str(document), "--model", TEST_MODEL,
            "--api-base", scripted_server.base_url, "--mode", "direct",
            home=isolated_home, result=tmp_path / "measured.json", stdout=stdout, stderr=stderr,
        )  # fmt: skip

    lines = err.read_text().splitlines()
    assert code == 1, lines
    assert peak_kb < RSS_BOUND_KB
    assert "Traceback" not in err.read_text()
    assert lines[-1].startswith(
        "rlm-desktop run: the provider's reply was larger than 128 KB, more than 2,048 output "
        "tokens (the max_tokens it was sent) can take"
    )
    assert out.read_text().startswith("No answer (error): the provider's reply was larger than")


async def test_a_reply_holding_a_lone_surrogate_is_taken_as_any_other(
    scripted_server: ScriptedServer,
) -> None:
    """A provider's JSON can spell a lone surrogate (`\\ud800`): a root reply and a sub-call reply
    holding one (long enough to be measured against the hold) had ended the run as an internal
    error (issue #41's export attack, found again on the way in)."""
    odd = "\ud800" * 3000
    code = f"print(len(llm_query('echo')))\nFINAL({odd[:5]!r} + 'done')"
    scripted_server.respond_with(scripted({QUERY: [repl(code, prose=odd)]}, sub=odd))
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(max_turns=2)))
    assert result.status == "completed", result.error
    assert result.answer.endswith("done")
    (turn,) = of_type(events, TurnExecuted)
    assert "3000" in turn.observation
