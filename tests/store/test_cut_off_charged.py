"""Requests cut off by a kill are charged what they held, as the live ledger charges a request
cancelled in flight: the provider may have billed them (they were charged nothing)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rlm_desktop.paths import database_path
from rlm_desktop.store import Store
from rlm_desktop.store.queries import CUT_OFF
from tests.cli import start_cli
from tests.engine.scripting import QUERY, TEST_MODEL, repl, scripted
from tests.scripted_server import Reply, ScriptedServer
from tests.store.live import kill_when, peek

SLOW = 3


def test_requests_cut_off_by_a_kill_are_charged_their_hold(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    cell = repl(f"llm_query_batched(['slow {{}}'.format(i) for i in range({SLOW})])")
    scripted_server.respond_with(scripted({QUERY: [cell]}, sub=Reply(content="late", delay_s=60)))
    document = tmp_path / "notes.txt"
    document.write_text("The meeting is on Tuesday.\n")
    path = database_path()
    process = start_cli(
        "run", "--query", QUERY, "--doc", str(document), "--model", TEST_MODEL,
        "--api-base", scripted_server.base_url, "--mode", "rlm", "--price",
        f"{TEST_MODEL}=1,2", home=isolated_home, stderr=subprocess.PIPE,
    )  # fmt: skip
    waiting = "SELECT count(*) FROM llm_requests WHERE responded_at IS NULL"
    kill_when(process, lambda: (peek(path, waiting) or [(0,)])[0][0] >= SLOW, "the slow requests")

    store = Store(path)
    try:
        (listed,) = store.list_sessions()
        shown = store.session(listed["id"])
    finally:
        store.close()
    held = peek(
        path,
        "SELECT reserved_tokens, reserved_output_tokens, reserved_cost_usd, input_tokens,"
        " output_tokens, cost_usd, error FROM llm_requests WHERE responded_at IS NULL",
    )
    assert len(held) == SLOW
    for tokens, output, cost, charged_in, charged_out, charged_cost, error in held:
        assert (charged_in + charged_out, charged_out, charged_cost) == (tokens, output, cost)
        assert output > 0
        assert cost > 0
        assert CUT_OFF in error
    session = shown["session"]
    assert session["status"] == "interrupted"
    root_reply = peek(path, "SELECT cost_usd FROM llm_requests WHERE responded_at IS NOT NULL")
    assert session["cost_usd"] == pytest.approx(
        sum(c for (c,) in root_reply) + sum(r[2] for r in held)
    )
    assert session["output_tokens"] >= sum(r[1] for r in held)
    sub_calls = [c for c in shown["calls"] if c["parent_id"] is not None]
    assert len(sub_calls) == SLOW
    assert all(c["status"] == "interrupted" and c["output_tokens"] > 0 for c in sub_calls)
