"""Real sessions with what the scripted server received for each: the requests to rebuild.

The five export shapes of `real_sessions` (fan-out, depth 2, failed, timed out, cancelled), plus a
long run compacted twice, a run out of turns whose cells leave variables behind, a direct
answer (one LLM call with a system prompt), and the last two with a profile whose model has no
system role (`gemma`: the system prompt sent in the first user turn). Each session is
recorded in SQLite by the real recorder while the server keeps every chat request it is sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.engine import Budget
from rlm_desktop.store import Store
from tests.engine.long_run import LongRun
from tests.scripted_rlm import Responder, repl, scripted
from tests.scripted_server import ScriptedServer
from tests.store.real_sessions import BUDGETS, SCRIPTS, record_run

LONG_TURNS = 14
COMPACT_TOKENS = 2_500
VARIABLES_CODE = (
    "x = 41\nname = 'abc'\nimport re\nfrom os.path import join\ndoc = context\n"
    "chunk = context[:5000]\nbig = list(range(100_000))\nclass Box:\n    pass\n"
    "def helper():\n    return 1\n_hidden = 1\nparts = llm_query_batched(['a', 'b'])"
)
OUT_OF_TURNS = scripted(root=[repl(VARIABLES_CODE), repl("y = x + 1"), "FINAL(forty-two)"])


@dataclass(frozen=True)
class Sent:
    """A recorded session and the chat requests the server received while it ran."""

    session_id: str
    requests: list[dict[str, Any]]


SHAPES: dict[str, tuple[Callable[[], Responder], Budget | None, dict[str, Any]]] = {
    **{name: (lambda s=script: s, BUDGETS.get(name), {}) for name, script in SCRIPTS.items()},
    "compacted": (
        lambda: LongRun(LONG_TURNS),  # it counts the turns it answered: a new one each run
        Budget(max_turns=LONG_TURNS),
        {"compact_tokens": COMPACT_TOKENS},
    ),
    "out_of_turns": (lambda: OUT_OF_TURNS, Budget(max_turns=2), {}),
    "direct": (lambda: lambda request: "The total is 42.", None, {"mode": "direct"}),
    "no_system_role": (lambda: OUT_OF_TURNS, Budget(max_turns=2), {"profile": "gemma"}),
    "direct_no_system_role": (
        lambda: lambda request: "The total is 42.",
        None,
        {"mode": "direct", "profile": "gemma"},
    ),
}
"""Each shape: a function making its scripted model, its budget and its other settings."""


async def _record(server: ScriptedServer, store: Store, name: str) -> Sent:
    make_script, budget, settings = SHAPES[name]
    server.respond_with(make_script())
    before = len(server.chat_requests())
    run = await record_run(store, server, cancel=name == "cancelled", budget=budget, **settings)
    return Sent(run.run_id, server.chat_requests()[before:])


@pytest.fixture(scope="module")
def sent_sessions(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Store, dict[str, Sent]]]:
    """(store, {shape: Sent}) for every shape of `SHAPES`, in a data folder of the module's own."""
    home = tmp_path_factory.mktemp("sent-sessions")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RLM_DESKTOP_HOME", str(home))
        server = ScriptedServer().start()
        store = Store(Path(home) / "sessions.db")
        try:
            yield store, {name: asyncio.run(_record(server, store, name)) for name in SHAPES}
        finally:
            store.close()
            server.stop()
