"""The first run in a fresh process: importing litellm must not freeze the event loop (the GUI's)."""

from __future__ import annotations

from pathlib import Path

from tests.cli import run_python

SCRIPT = """
import asyncio
import time

from rlm_desktop import paths
from rlm_desktop.engine import ContextDocument, Run, RunConfig
from tests.scripted_server import ScriptedServer


async def main() -> None:
    server = ScriptedServer().start()
    server.enqueue("```repl\\nFINAL('ok')\\n```")
    config = RunConfig(query="q", model="openai/test-model", api_base=server.base_url, mode="rlm")
    run = Run(
        config, [ContextDocument(name="a.txt", text="some text")], folders=paths.engine_folders()
    )
    gaps = []

    async def heartbeat() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    beat = asyncio.create_task(heartbeat())
    await asyncio.sleep(0.05)
    result = await run.execute()
    beat.cancel()
    print(result.status, f"{max(gaps):.2f}")
    server.stop()


asyncio.run(main())
"""


def test_the_first_run_keeps_the_event_loop_turning(isolated_home: Path) -> None:
    result = run_python("-c", SCRIPT, home=isolated_home, timeout=60)
    assert result.returncode == 0, result.stderr
    status, longest_stall = result.stdout.split()
    assert status == "completed"
    assert float(longest_stall) < 0.5, f"the event loop stalled for {longest_stall} s"
