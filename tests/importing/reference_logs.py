"""Real `RLMLogger` logs: the reference implementation (`rlms`, pinned in the dev extra) run in a
process of its own against the scripted server, its logger writing the JSONL file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import run_python
from tests.scripted_server import Reply, ScriptedServer

DRIVER = Path(__file__).with_name("reference_logger_driver.py")
QUESTION = "What is the total?"
DOCUMENT = "The ledger total is 42."


def reference_log(
    server: ScriptedServer,
    folder: Path,
    replies: list[str | Reply],
    *,
    max_depth: int = 1,
    max_iterations: int = 5,
) -> tuple[Path, str]:
    """Run the reference once, the server answering `replies` in order; (its log, the name of
    the exception the run raised or "")."""
    server.enqueue(*replies)
    settings = {"max_depth": max_depth, "max_iterations": max_iterations,
                "document": DOCUMENT, "question": QUESTION}  # fmt: skip
    done = run_python(
        str(DRIVER), json.dumps(settings), server.base_url, str(folder / "logs"), home=folder
    )
    assert done.returncode == 0, done.stderr[-2000:]
    log, raised = (
        done.stdout.splitlines()[:2] if done.stdout.count("\n") > 1 else (done.stdout.strip(), "")
    )
    return Path(log), raised
