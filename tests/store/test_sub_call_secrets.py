"""A real fan-out whose sub-calls' prompts and replies carry the run's key, an environment
secret and an `Authorization` header: none of them reaches the database file, wherever in an
event it sits (the first string field, a later one, the only one that holds it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Budget, Credentials
from rlm_desktop.store import Store
from tests.engine.scripting import make_run
from tests.scripted_rlm import scripted
from tests.scripted_server import ScriptedServer
from tests.store.test_secrets import assert_not_in_files

API_KEY = "sk-live-0a9b8c7d6e5f40312233"
ENV_SECRET = "envsecret-77dd88ee99ff"
HEADER_TOKEN = "hdr-3141592653a"
CALLS = 40
BIG = 3_000
"""Sub-calls enough for the store's writing process to write most of the run's events."""


def _sub_reply(prompt: str) -> str:
    """Every fourth sub-call answers with one of the secrets (or none), after its prompt's text."""
    n = int(prompt.rsplit(" ", 1)[-1])
    return [
        "seven",
        f"the key is {API_KEY}, said {n}",
        f"env said {ENV_SECRET}",
        f"curl -H 'Authorization: Bearer {HEADER_TOKEN}' {n}",
    ][n % 4]


@pytest.mark.parametrize("calls", [CALLS, BIG])
def test_no_secret_in_a_sub_call_reaches_the_file(
    scripted_server: ScriptedServer,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    calls: int,
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", ENV_SECRET)
    prompts = (
        f"['plain %d' % i for i in range(0, {calls}, 4)]"
        f" + ['key {API_KEY} %d' % i for i in range(1, {calls}, 4)]"
        f" + ['env {ENV_SECRET} %d' % i for i in range(2, {calls}, 4)]"
        f" + ['api_key={HEADER_TOKEN} %d' % i for i in range(3, {calls}, 4)]"
    )
    scripted_server.respond_with(
        scripted(
            root=[
                f"```repl\nr = llm_query_batched({prompts})\n```",
                "```repl\nFINAL(str(len(r)))\n```",
            ],
            sub=_sub_reply,
        )
    )
    store = Store(paths.database_path())
    run = make_run(
        scripted_server, budget=Budget(max_turns=3), credentials=Credentials(api_key=API_KEY)
    )
    recorder = store.record(run)
    result = asyncio.run(run.execute())
    recorder.close()
    assert (result.status, result.answer) == ("completed", str(calls))
    rows = store.db.execute(
        "SELECT prompt, response FROM calls WHERE session_id = ? AND kind = 'llm'", [run.run_id]
    ).fetchall()
    assert len(rows) == calls
    scrubbed = [c for c in rows if "[redacted]" in c[0] and "[redacted]" in c[1]]
    assert len(scrubbed) == calls * 3 // 4  # the texts are kept, the secrets in them replaced
    store.close()

    assert_not_in_files(isolated_home, (API_KEY, ENV_SECRET, HEADER_TOKEN))
