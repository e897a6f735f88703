"""Real sessions for the export tests: the engine over the scripted server, recorded in SQLite.

Five shapes a reviewer exports: a concurrent fan-out, a depth-2 tree, a failed run (the provider
refuses the root's first turn), a run that hits its time limit in the middle of a cell, and a run
stopped by the user while a cell runs. Recorded once per test module (about 10 s together).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.engine import Budget, Run
from rlm_desktop.engine.events import LLMResponded
from rlm_desktop.store import Store
from tests.engine.scripting import DOCUMENT, QUERY, make_run
from tests.scripted_rlm import scripted
from tests.scripted_server import Reply, ScriptedServer

FANOUT = 6
FANOUT_TURN = (
    "I will ask about each part at once.\n```repl\n"
    f"parts = llm_query_batched([f'part {{i}}' for i in range({FANOUT})])\n"
    "print('fanned', len(parts))\n```"
)
CHILD_Q, GRANDCHILD_Q = "What does the child find?", "What does the grandchild find?"
SLEEPING_TURN = "Counting slowly.\n```repl\nimport time\nprint('started')\ntime.sleep(60)\n```"
STDERR_TURN = "```repl\nimport sys\nprint('to stderr', file=sys.stderr)\nprint(1 / 0)\n```"


def final(answer: str) -> str:
    return f"```repl\nFINAL({answer!r})\n```"


SCRIPTS = {
    "fanout": scripted(root=[FANOUT_TURN, final("six parts read")], sub="part read"),
    "depth2": scripted(
        {
            QUERY: [f"```repl\nr = rlm_query({CHILD_Q!r})\nprint(r)\n```", final("deep answer")],
            CHILD_Q: [f"```repl\nFINAL(rlm_query({GRANDCHILD_Q!r}))\n```"],
            GRANDCHILD_Q: [STDERR_TURN, final("grandchild says 7")],
        }
    ),
    "failed": lambda request: Reply(status=400, content="model_not_found: no such model"),
    "timeout": scripted(root=[SLEEPING_TURN]),
    "cancelled": scripted(root=[SLEEPING_TURN]),
}
BUDGETS = {"timeout": Budget(timeout_s=3), "depth2": Budget(max_depth=3)}


async def record_run(
    store: Store, server: ScriptedServer, *, cancel: bool = False, **make: Any
) -> Run:
    """Run the engine over `server` (its script already set), recorded in `store`; `cancel`
    stops it half a second into its first cell, as a user would. `make`: `make_run`'s settings."""
    run: Run = make_run(server, **make)
    recorder = store.record(run, documents=[DOCUMENT])
    replied = asyncio.Event()
    run.bus.add_listener(lambda event: replied.set() if isinstance(event, LLMResponded) else None)
    task = asyncio.create_task(run.execute())
    if cancel:
        await replied.wait()
        await asyncio.sleep(0.5)  # the cell starts; stopping it is the point
        run.cancel()
    await task
    recorder.close()
    return run


async def _record(server: ScriptedServer, store: Store, name: str) -> str:
    server.respond_with(SCRIPTS[name])
    run = await record_run(store, server, cancel=name == "cancelled", budget=BUDGETS.get(name))
    return run.run_id


@pytest.fixture(scope="module")
def real_sessions(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Store, dict[str, str]]]:
    """(store, {shape: session id}) for the five shapes, in a data folder of the module's own."""
    home = tmp_path_factory.mktemp("real-sessions")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RLM_DESKTOP_HOME", str(home))
        server = ScriptedServer().start()
        store = Store(Path(home) / "sessions.db")
        try:
            ids = {name: asyncio.run(_record(server, store, name)) for name in SCRIPTS}
            yield store, ids
        finally:
            store.close()
            server.stop()
