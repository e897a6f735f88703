"""The first run in a fresh process: importing litellm must not freeze the event loop (the GUI's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

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


def test_the_first_run_keeps_the_event_loop_turning() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    status, longest_stall = result.stdout.split()
    assert status == "completed"
    assert float(longest_stall) < 0.5, f"the event loop stalled for {longest_stall} s"
