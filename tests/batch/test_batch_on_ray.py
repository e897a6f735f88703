"""`batch --ray local`: every row a task on a Ray cluster started for the command, its events
streamed home into a session tagged with the batch, which records the node it ran on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.batch.scripting import expected, rows, write_csv
from tests.batch.stored import query
from tests.cli import run_cli
from tests.scripted_server import ScriptedServer

pytest.importorskip("ray")


def test_rows_run_on_a_ray_cluster(server: ScriptedServer, work: Path, isolated_home: Path) -> None:
    entries = rows(5)
    questions = write_csv(work / "questions.csv", entries)
    done = run_cli("batch", "--questions", str(questions), "--setting",
                   "model=openai/good-model,mode=rlm,depth=1", "--api-base", server.base_url,
                   "--ray", "local", "--json", home=isolated_home, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["executor"], summary["done"]) == ("ray", 5)
    for entry, result in zip(entries, summary["results"], strict=True):
        assert result["answer"] == expected(entry)
        assert [source["match"] for source in result["sources"]] == ["exact"]
        assert (result["executor"], result["attempts"]) == ("ray", 1)
        assert result["node"].startswith("ray ")
    placed = query(isolated_home,
        "SELECT s.ran_on FROM batch_sessions b JOIN sessions s ON s.id = b.session_id")  # fmt: skip
    assert len(placed) == 5
    assert {json.loads(ran_on)["executor"] for (ran_on,) in placed} == {"ray"}
