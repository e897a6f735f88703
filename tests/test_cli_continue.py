"""`rlm-desktop run --continue SESSION_ID`: a follow-up in a new process, from the saved session."""

from __future__ import annotations

import json
from pathlib import Path

from rlm_desktop.commands.run import EXIT_USAGE
from rlm_desktop.paths import database_path
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, rlm_requests, scripted
from tests.scripted_server import ScriptedServer

FIRST = "Which regions are in the ledger?"
SECOND = "What is the north total doubled?"
THIRD = "What does the addendum add?"


def _run(server: ScriptedServer, query: str, *extra: str) -> list[str]:
    return [
        "run", "--query", query, "--model", TEST_MODEL, "--api-base", server.base_url,
        "--mode", "rlm", "--json", *extra,
    ]  # fmt: skip


def test_continue_goes_on_from_a_saved_session_in_a_new_process(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    ledger = tmp_path / "ledger.txt"
    ledger.write_text("north 12\nsouth 30\n", encoding="utf-8")
    addendum = tmp_path / "addendum.txt"
    addendum.write_text("north gets 5 more\n", encoding="utf-8")
    scripted_server.respond_with(
        scripted(
            {
                FIRST: [
                    repl(
                        "totals = dict(line.split() for line in context.splitlines())\n"
                        "FINAL(', '.join(totals))"
                    )
                ],
                SECOND: [repl("FINAL(2 * int(totals['north']))")],
                THIRD: [repl("FINAL(context_1.strip() + ' / ' + context.splitlines()[0])")],
            }
        )
    )
    first = run_cli(*_run(scripted_server, FIRST, "--doc", str(ledger)), home=isolated_home)
    assert first.returncode == 0, first.stderr
    first_id = json.loads(first.stdout)["session_id"]

    ledger.unlink()  # the follow-up's documents come back from the session, not the disk
    second = run_cli(*_run(scripted_server, SECOND, "--continue", first_id), home=isolated_home)
    assert second.returncode == 0, second.stderr
    answer = json.loads(second.stdout)
    assert (answer["status"], answer["answer"]) == ("completed", "24")
    opening = rlm_requests(scripted_server, SECOND)[0]["messages"][1]["content"]
    assert f"Q: {FIRST}" in opening
    assert "Your variables restored: totals." in opening

    third = run_cli(
        *_run(scripted_server, THIRD, "--continue", answer["session_id"], "--doc", str(addendum)),
        home=isolated_home,
    )
    assert third.returncode == 0, third.stderr
    assert json.loads(third.stdout)["answer"] == "north gets 5 more / north 12"

    store = Store(database_path())
    try:
        heads = [store.session(s)["session"] for s in (first_id, answer["session_id"])]
        last = store.session(json.loads(third.stdout)["session_id"])["session"]
    finally:
        store.close()
    assert heads[1]["settings"]["follows"] == first_id
    assert last["settings"]["conversation_id"] == first_id
    assert [d["name"] for d in last["documents"]] == ["ledger.txt", "addendum.txt"]


def test_continue_with_an_unknown_session_is_one_line_and_exit_2(
    scripted_server: ScriptedServer, isolated_home: Path
) -> None:
    done = run_cli(
        *_run(scripted_server, SECOND, "--continue", "no-such-session"), home=isolated_home
    )
    assert done.returncode == EXIT_USAGE
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert "no-such-session" in done.stderr
    assert "Traceback" not in done.stderr
