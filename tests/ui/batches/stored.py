"""Batches in a real store, made the way `rlm-desktop batch` makes them (`batch.opening`,
`batch.runner` against the scripted server) and read back through `BatchRecords`:

- `ran`: two rows run here, `acme` answered (with markup in its answer, as a model may write)
  and `junk` whose folder holds nothing loadable (an error, no session);
- `half`: one row's result as a Ray node that died would leave it (retried on another node),
  saved through `BatchRecords.save`; its other row not run yet;
- `unrun`: recorded, never run, its questions file still there;
- `gone`: recorded, never run, its questions file deleted since.

Made with `asyncio.run`, so a test must ask for this before the qasync loop (`qloop`, `window`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop import paths
from rlm_desktop.batch.opening import create_batch, plan_batch
from rlm_desktop.batch.records import BatchRecords
from rlm_desktop.batch.runner import Batch
from rlm_desktop.commands.run import credentials_for
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.settings import parse_setting
from rlm_desktop.store import Store
from tests.scripted_rlm import asked, repl
from tests.scripted_server import Reply, ScriptedServer

MODEL = "scripted-model"
ANSWER = "<b>Acme Corp</b> & <i>Globex</i> signed it"
"""What the model answers: markup that must show as text."""
NODE = "ray vm-7 (node 3fa2c1d0)"


@dataclass(frozen=True)
class StoredBatches:
    """The ids of the batches made, and the session of `acme`'s run."""

    ran: str
    half: str
    unrun: str
    gone: str
    acme_session: str


def respond(request: dict[str, Any]) -> str | Reply:
    """The root's first turn answers; nothing else is scripted."""
    seen = asked(request)
    if seen.kind == "rlm" and seen.turn == 0:
        return repl(f"FINAL({ANSWER!r}, sources=['Acme Corp signed'])")
    return Reply(status=400, content="the batch script has no reply for this request")


def questions(folder: Path, name: str) -> Path:
    """A questions file of two rows: `acme` over a text, `junk` over a folder with nothing
    loadable in it."""
    (folder / "acme").mkdir(parents=True, exist_ok=True)
    (folder / "acme" / "contract.txt").write_text(
        "Acme Corp signed the supply contract with Globex on 3 March.\n" * 4, encoding="utf-8"
    )
    (folder / "junk").mkdir(exist_ok=True)
    (folder / "junk" / "blob.bin").write_bytes(bytes(range(256)) * 8)
    path = folder / name
    path.write_text(
        "id,question,documents\nacme,Who signed the contract?,acme\njunk,What is in it?,junk\n",
        encoding="utf-8",
    )
    return path


def make_batches(folder: Path) -> StoredBatches:
    """The four batches in the app's database (the test's data folder)."""
    server = ScriptedServer(models=(MODEL,)).start()
    server.respond_with(respond)
    store = Store(paths.database_path())
    try:
        setting = parse_setting(f"default:model=openai/{MODEL},mode=rlm,depth=1")
        options = EvaluationOptions(
            api_base=server.base_url, prices={f"openai/{MODEL}": (1e-6, 2e-6)}, concurrency=1,
            max_cost_usd=5.0,
        )  # fmt: skip
        folders = paths.engine_folders()

        def new(name: str) -> Batch:
            plan = plan_batch(questions(folder, name), setting, options, folders=folders)
            return create_batch(store, plan, folders=folders, credentials=credentials_for)

        ran = new("questions.csv")
        results = {r.row_id: r for r in asyncio.run(ran.run())}
        half, unrun, gone = new("half.csv"), new("unrun.csv"), new("gone.csv")
        acme = results["acme"]
        assert acme.session_id is not None
        retried = dataclasses.replace(
            acme, batch_id=half.batch_id, executor="ray", node=NODE, attempts=2
        )
        BatchRecords(store).save(retried)
        (folder / "gone.csv").unlink()
        return StoredBatches(
            ran.batch_id, half.batch_id, unrun.batch_id, gone.batch_id, acme.session_id
        )
    finally:
        store.close()
        server.stop()
