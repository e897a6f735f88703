"""A process that records a long synthetic run and never finishes it (the crash test kills it)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.store import Store
from tests.store.synthetic import FakeRun, run_events


async def main(path: Path) -> None:
    store = Store(path)
    run = FakeRun("killed-run", EventBus())
    store.record(run)
    for event in run_events("killed-run", turns=100, calls_per_turn=50, finish=False):
        run.bus.publish(event)
        await asyncio.sleep(0.001)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
