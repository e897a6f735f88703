"""One scenario through RLM Desktop's engine, printing one JSON line (the twin of
reference_driver.py): the engine and litellm are imported before the clock starts, as the
reference's package is; the run is recorded in a real store, as the app and the CLI record it.

`python -m tests.benchmarks.compare.ours_driver SCENARIO_JSON BASE_URL` in an isolated data folder.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ContextDocument, Credentials, Run, RunConfig
from rlm_desktop.engine.litellm_loader import load_litellm
from rlm_desktop.store import Store


async def run_once(scenario: dict[str, object], base_url: str) -> dict[str, object]:
    price = float(str(scenario["price"]))
    config = RunConfig(
        query=str(scenario["question"]),
        model="openai/test-model",
        api_base=base_url,
        mode="rlm",
        prices={"openai/test-model": (price, price)},
        budget=Budget(
            max_turns=int(str(scenario["max_turns"])),
            max_depth=int(str(scenario["max_depth"])),
            max_cost_usd=scenario["max_cost_usd"],  # type: ignore[arg-type]
            cell_timeout_s=float(str(scenario["cell_timeout_s"])),
            concurrency=256,
        ),
    )
    documents = [ContextDocument(name="inventory.txt", text=str(scenario["document"]), path="")]
    run = Run(config, documents, folders=paths.engine_folders(), credentials=Credentials())
    store = Store(paths.database_path())
    recorder = store.record(run, documents=documents)
    started = time.perf_counter()
    try:
        result = await run.execute()
    finally:
        recorder.close()
        store.close()
    return {
        "status": result.status,
        "answer": result.answer,
        "error": result.error,
        "wall_s": time.perf_counter() - started,
        "cost_usd": result.cost_usd,
    }


def main() -> None:
    load_litellm()
    outcome = asyncio.run(run_once(json.loads(sys.argv[1]), sys.argv[2]))
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
