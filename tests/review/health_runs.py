"""Real runs for the health checks: the engine over the scripted server, kept in a real SQLite
file, then read back by `session_health` as the CLI and the window read them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ContextDocument, Run, RunConfig
from rlm_desktop.review.health import HealthReport, session_health
from rlm_desktop.store import Store
from tests.scripted_rlm import Responder
from tests.scripted_server import ScriptedServer

TEST_MODEL = "openai/test-model"
QUERY = "How many crates does the warehouse hold?"
LEDGER = ContextDocument(
    name="warehouse.txt",
    text="".join(
        f"Entry {i:05d}: sector {i * 7 % 13} holds {i * 31 % 97} crates of item {i * 11 % 1009}.\n"
        for i in range(2500)
    ),
)
"""A document too long for one comfortable direct call (about 150,000 characters, each line
different), so RLM mode is the right choice for it."""
NOTE = ContextDocument(
    name="note.txt", text="".join(f"Sector {i} holds {i * 3} crates.\n" for i in range(40))
)
"""A document a direct call would read in one go."""


async def recorded(
    store: Store,
    server: ScriptedServer,
    responder: Responder,
    *,
    documents: Sequence[ContextDocument] = (LEDGER,),
    budget: Budget | None = None,
    query: str = QUERY,
    **settings: Any,
) -> str:
    """Run the engine in RLM mode against `server` answering with `responder`, recording into
    `store`; returns the session id."""
    server.respond_with(responder)
    config = RunConfig(
        query=query,
        model=settings.pop("model", TEST_MODEL),
        api_base=server.base_url,
        mode=settings.pop("mode", "rlm"),
        budget=budget or Budget(),
        **settings,
    )
    run = Run(config, documents, folders=paths.engine_folders())
    recorder = store.record(run, documents=documents)
    await run.execute()
    recorder.close()
    return run.run_id


async def health_of(
    store: Store, server: ScriptedServer, responder: Responder, **options: Any
) -> HealthReport:
    """Record a run (as `recorded`) and check its health from the store."""
    return session_health(store, await recorded(store, server, responder, **options))


def rules(report: HealthReport) -> set[tuple[str, str]]:
    """The `(kind, rule)` of every finding."""
    return {(finding.kind, finding.rule) for finding in report.findings}
