"""Real runs for the review tests: the engine over the scripted server, recorded into the test's
own SQLite file.

Each `Plan` is one run: its root fans out `fan_out` sub-LLM calls in its first turn, then submits
`answer`. Runs differ in model, profile, depth setting and fan-out, so cost, tokens, sub-calls
and wall time differ too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ContextDocument, Run, RunConfig
from rlm_desktop.store import Store
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import Reply, ScriptedServer

MODELS = ("openai/test-model", "openai/other-model")
PRICES = {MODELS[0]: (1e-6, 2e-6), MODELS[1]: (3e-6, 6e-6)}
DOCUMENT = ContextDocument(name="tanks.txt", text="tank A: 7 zebrafish\n" * 40, path="")


@dataclass(frozen=True)
class Plan:
    """One scripted run."""

    query: str
    fan_out: int
    answer: str = "There are 7 zebrafish."
    model: str = MODELS[0]
    profile: str | None = None
    max_depth: int = 2


HISTORY = [
    Plan("How many fish in tank one?", fan_out=1),
    Plan("How many fish in tank two?", fan_out=3, profile="small"),
    Plan("How many fish in tank three?", fan_out=6, model=MODELS[1]),
    Plan("How many fish in tank four?", fan_out=2, max_depth=1),
    Plan("How many fish in tank five?", fan_out=12, model=MODELS[1], profile="small"),
    Plan("How many fish in tank six?", fan_out=4),
    Plan("How many fish in tank seven?", fan_out=5, model="openai/unpriced-model"),
]
"""A small history: two priced models and an unpriced one, two profiles, two depth settings."""
PRICED = "cost_usd IS NOT NULL AND NOT unpriced"
"""The SQL condition of a run whose cost is fully known (the cost spread covers only those)."""


def _turns(plan: Plan) -> list[str]:
    ask = (
        f"xs = llm_query_batched([f'count tank {{i}}' for i in range({plan.fan_out})])\n"
        "print(len(xs), xs[:2])"
    )
    return [repl(ask), repl(f"FINAL({plan.answer!r})", prose="Done.")]


def _sub(prompt: str) -> Reply:
    """Sub-calls answer "7", with a usage that grows with the tank's number."""
    number = int(prompt.rsplit(" ", 1)[-1]) if prompt[-1:].isdigit() else 0
    return Reply(content="7", prompt_tokens=40 + 7 * number, completion_tokens=3 + number % 5)


async def record_runs(
    server: ScriptedServer,
    plans: Sequence[Plan],
    prices: dict[str, tuple[float, float]] | None = None,
) -> list[str]:
    """Run every plan in turn against `server`, recorded by a real store, with `prices` per
    model (`PRICES` by default; a local model is priced at $0); their session ids."""
    server.respond_with(scripted({plan.query: _turns(plan) for plan in plans}, sub=_sub))
    store = Store(paths.database_path())
    ids = []
    try:
        for plan in plans:
            config = RunConfig(
                query=plan.query,
                model=plan.model,
                api_base=server.base_url,
                mode="rlm",
                profile=plan.profile,
                prices=dict(PRICES if prices is None else prices),
                budget=Budget(max_depth=plan.max_depth),
            )
            run = Run(config, [DOCUMENT], folders=paths.engine_folders())
            recorder = store.record(run, documents=[DOCUMENT])
            result = await run.execute()
            recorder.close()
            assert result.status == "completed", result
            ids.append(run.run_id)
    finally:
        store.close()
    return ids
