"""A scripted RLM run for the store's end-to-end tests: one sub-call, then `FINAL`.

The root's first turn asks a sub-LLM and prints a marker word; its second turn submits the
answer. Run as a module, it records such a run whose second turn never returns (the crash test
kills it there).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from rlm_desktop import paths
from rlm_desktop.engine import ContextDocument, Credentials, Run, RunConfig
from rlm_desktop.store import Store
from tests.scripted_rlm import Responder, scripted
from tests.scripted_server import Reply, ScriptedServer

API_KEY = "sk-e2e-4f3e2d1c0b9a8877"
MARKER = "zebrafishcount"
DOCUMENT = ContextDocument(name="tanks.txt", text="tank A: 7 zebrafish\n" * 50, path="")
FIRST_TURN = f"Let me ask.\n```repl\nx = llm_query('How many?')\nprint('{MARKER}', x)\n```"
FINAL_TURN = "```repl\nFINAL('There are 7 zebrafish.')\n```"


def responder(stall_final: bool = False) -> Responder:
    """The root's two turns (the second held back for two minutes if `stall_final`); sub-calls
    answer "7"."""
    final = Reply(content=FINAL_TURN, delay_s=120) if stall_final else FINAL_TURN
    return scripted(root=[FIRST_TURN, final], sub="7")


def make_run(server: ScriptedServer) -> Run:
    """A run against `server` in RLM mode."""
    config = RunConfig(
        query="How many zebrafish are in tank A?",
        model="openai/test-model",
        api_base=server.base_url,
        mode="rlm",
    )
    return Run(
        config,
        [DOCUMENT],
        folders=paths.engine_folders(),
        credentials=Credentials(api_key=API_KEY),
    )


async def _stalled_run(path: Path) -> None:
    server = ScriptedServer().start()
    server.respond_with(responder(stall_final=True))
    run = make_run(server)
    store = Store(path)
    store.record(run, documents=[DOCUMENT], secrets=[API_KEY])
    await run.execute()


if __name__ == "__main__":
    asyncio.run(_stalled_run(Path(sys.argv[1])))
