"""A provider that echoes the key it was sent in an error body never puts that key in front of the
user, into the session database or into the model's REPL."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from rlm_desktop.engine import Credentials
from rlm_desktop.engine.events import LLMRetried, TurnExecuted
from rlm_desktop.redact import REDACTED
from tests.cli import run_cli
from tests.engine.scripting import QUERY, TEST_MODEL, make_run, of_type, repl, run_to_end, scripted
from tests.scripted_server import Reply, ScriptedServer

KEY = "sk-live-7Hq2xZ9pL4mN8vB3cR6tY1wK"
ECHO = Reply(status=401, content="Incorrect API key provided:", echo_key=True)


async def test_a_sub_call_refused_with_the_key_in_the_body_shows_the_model_no_key(
    scripted_server: ScriptedServer,
) -> None:
    cell = repl(
        "try:\n    llm_query('hello')\nexcept LLMCallError as error:\n    print('failed:', error)"
    )
    overloaded = Reply(status=503, content="overloaded; you sent", echo_key=True)
    sub = _first_then(overloaded, ECHO)
    scripted_server.respond_with(scripted({QUERY: [cell, repl("FINAL('no key here')")]}, sub=sub))
    run = make_run(scripted_server, credentials=Credentials(api_key=KEY), max_retries=1)
    result, events = await run_to_end(run)

    assert any(KEY in sent_key(h) for h in scripted_server.headers)  # it was sent
    shown = of_type(events, TurnExecuted)[0].observation
    assert "failed: HTTP 401: Incorrect API key provided: Bearer " + REDACTED in shown
    assert of_type(events, LLMRetried)[0].reason.endswith(REDACTED)
    assert not any(KEY in repr(dataclasses.asdict(event)) for event in events)
    assert KEY not in repr(result)


def _first_then(first: Reply, then: Reply) -> Callable[[str], Reply]:
    replies = [first]

    def reply(_prompt: str) -> Reply:
        return replies.pop() if replies else then

    return reply


def sent_key(headers: dict[str, str]) -> str:
    """The `Authorization` header of a request (header names arrive in any case)."""
    return next((v for k, v in headers.items() if k.lower() == "authorization"), "")


def test_a_refused_key_echoed_back_stays_out_of_json_stderr_and_the_database(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("The meeting is on Tuesday.\n")
    scripted_server.enqueue(ECHO)
    result = run_cli(
        "run", "--query", QUERY, "--doc", str(document), "--model", TEST_MODEL,
        "--api-base", scripted_server.base_url, "--mode", "rlm", "--json",
        home=isolated_home, env={"LOCAL_LLM_API_KEY": KEY},
    )  # fmt: skip

    assert result.returncode == 1, result.stderr
    assert KEY in sent_key(scripted_server.headers[0])
    output = json.loads(result.stdout)
    assert output["error"].startswith("HTTP 401: Incorrect API key provided: Bearer " + REDACTED)
    assert KEY not in result.stdout
    assert KEY not in result.stderr
    database = (isolated_home / "sessions.db").read_bytes()
    assert output["session_id"].encode() in database
    assert KEY.encode() not in database
