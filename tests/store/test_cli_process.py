"""`rlm-desktop run` and `rlm-desktop sessions` as real processes: record, kill, review offline."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rlm_desktop.paths import database_path
from tests.cli import run_cli, start_cli
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.store.engine_script import API_KEY, MARKER, responder
from tests.store.live import count, kill_when, peek

# --api-base runs send the local server's key; OpenAI's is there to show it is never sent.
KEYS = {"OPENAI_API_KEY": API_KEY, "LOCAL_LLM_API_KEY": API_KEY}
Cli = Callable[..., subprocess.CompletedProcess[str]]
STATUSES = "SELECT status FROM calls ORDER BY seq"


@pytest.fixture
def cli(isolated_home: Path) -> Cli:
    """`rlm-desktop *argv` in the test's own data folder, with the keys in its environment."""

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*argv, home=isolated_home, env=KEYS)

    return run


def _run_argv(server: ScriptedServer, document: Path) -> list[str]:
    return [
        "run", "--query", "How many zebrafish are in tank A?", "--doc", str(document),
        "--model", "openai/test-model", "--api-base", server.base_url, "--mode", "rlm", "--json",
    ]  # fmt: skip


def test_unknown_id_exits_2_with_one_line(cli: Cli) -> None:
    for argv in (
        ("show", "nope"),
        ("show", "nope", "--json"),
        ("export", "nope", "--format", "md"),
    ):
        result = cli("sessions", *argv)
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1
        assert "'nope'" in result.stderr


def test_a_cli_run_is_reviewed_and_exported_offline(
    scripted_server: ScriptedServer, tmp_path: Path, cli: Cli
) -> None:
    document = tmp_path / "tanks.txt"
    document.write_text("tank A: 7 zebrafish\n" * 50)
    scripted_server.respond_with(responder())
    ran = cli(*_run_argv(scripted_server, document))
    assert ran.returncode == 0, ran.stderr
    session_id = json.loads(ran.stdout)["session_id"]
    scripted_server.stop()  # review needs no server

    shown = cli("sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    detail = json.loads(shown.stdout)
    assert detail["session"]["status"] == "completed"
    assert [c["kind"] for c in detail["calls"]] == ["rlm", "llm"]
    assert MARKER in detail["turns"][0]["stdout"]
    assert detail["session"]["documents"][0]["name"] == "tanks.txt"

    listed = json.loads(cli("sessions", "list", "--json").stdout)["sessions"]
    assert [s["id"] for s in listed] == [session_id]
    found = json.loads(cli("sessions", "search", MARKER, "--json").stdout)["sessions"]
    assert [session["id"] for session in found] == [session_id]

    for fmt in ("jsonl", "md", "otlp"):
        target = tmp_path / f"export.{fmt}"
        exported = cli("sessions", "export", session_id[:12], "--format", fmt, "-o", str(target),
                        "--include-content")  # fmt: skip
        assert exported.returncode == 0, exported.stderr
        assert API_KEY not in target.read_text()
    for path in database_path().parent.glob("sessions.db*"):
        assert API_KEY.encode() not in path.read_bytes()

    assert cli("sessions", "delete", session_id).returncode == 0
    assert cli("sessions", "show", session_id).returncode == 2


def test_a_cli_run_killed_with_sigkill_shows_interrupted(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path, cli: Cli
) -> None:
    document = tmp_path / "tanks.txt"
    document.write_text("tank A: 7 zebrafish\n" * 50)
    scripted_server.respond_with(responder(stall_final=True))
    process = start_cli(
        *_run_argv(scripted_server, document), home=isolated_home, env=KEYS,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    path = database_path()
    kill_when(
        process,
        lambda: peek(path, STATUSES) == [("running",), ("ok",)] and count(path, "cells") == 1,
        "the first turn was written",
    )

    listed = cli("sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (session,) = json.loads(listed.stdout)["sessions"]
    assert session["status"] == "interrupted"
    detail = json.loads(cli("sessions", "show", session["id"], "--json").stdout)
    assert [c["status"] for c in detail["calls"]] == ["interrupted", "ok"]
    assert MARKER in detail["turns"][0]["stdout"]


KILLED_WORD = "okapiwhistle"
SLEEPING_CELL = f"import time\nsighted = '{KILLED_WORD}'\ntime.sleep(60)"


def test_the_turn_running_when_the_app_was_killed_is_found_by_search(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path, cli: Cli
) -> None:
    """The export always showed the code of the turn a kill cut off; search did not find it."""
    document = tmp_path / "tanks.txt"
    document.write_text("tank A: 7 zebrafish\n" * 50)
    scripted_server.respond_with(
        scripted(
            root=[repl("print('counting tanks')"), f"Now look.\n```repl\n{SLEEPING_CELL}\n```"]
        )
    )
    process = start_cli(
        *_run_argv(scripted_server, document), home=isolated_home, env=KEYS,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    path = database_path()
    replied = f"SELECT count(*) FROM llm_requests WHERE content LIKE '%{KILLED_WORD}%'"
    kill_when(process, lambda: peek(path, replied) == [(1,)], "the sleeping cell's reply")

    (session,) = json.loads(cli("sessions", "list", "--json").stdout)["sessions"]
    assert session["status"] == "interrupted"
    exported = cli("sessions", "export", session["id"], "--format", "md")
    assert KILLED_WORD in exported.stdout  # as it always was

    searched = cli("sessions", "search", KILLED_WORD, "--json")
    assert searched.returncode == 0, searched.stderr
    (found,) = json.loads(searched.stdout)["sessions"]
    assert found["id"] == session["id"]
    (hit,) = found["hits"]
    assert hit["place"] == "reply (turn not finished) · root call · turn 2"
    assert f"[{KILLED_WORD}]" in hit["snippet"]
    printed = cli("sessions", "search", "sighted", KILLED_WORD)
    assert printed.stdout.splitlines()[0].startswith(session["id"])
    assert cli("sessions", "search", "counting", "tanks", "--json").returncode == 0
