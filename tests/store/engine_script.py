"""A scripted RLM run for the store's end-to-end tests: one sub-call, then `FINAL`.

The root's first turn asks a sub-LLM and prints a marker word; its second turn submits the
answer. Run as a module, it records such a run whose second turn never returns (the crash test
kills it there).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from rlm_desktop import paths
from rlm_desktop.engine import ContextDocument, Credentials, Run, RunConfig
from rlm_desktop.store import Store
from tests.scripted_server import Reply, ScriptedServer, system_text

API_KEY = "sk-e2e-4f3e2d1c0b9a8877"
MARKER = "zebrafishcount"
DOCUMENT = ContextDocument(name="tanks.txt", text="tank A: 7 zebrafish\n" * 50, path="")
FIRST_TURN = f"Let me ask.\n```repl\nx = llm_query('How many?')\nprint('{MARKER}', x)\n```"


def responder(stall_final: bool = False) -> Any:
    """Replies for root turns (recognised by the system prompt) and for sub-calls."""

    def reply(request: dict[str, Any]) -> str | Reply:
        if "llm_query" not in system_text(request):
            return "7"
        turns = sum(1 for message in request["messages"] if message["role"] == "assistant")
        if turns == 0:
            return FIRST_TURN
        final = "```repl\nFINAL('There are 7 zebrafish.')\n```"
        return Reply(content=final, delay_s=120) if stall_final else final

    return reply


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
