"""`batch --resume ID` with an id from a shared sessions.db that names a folder of the user's:
refused in one line, nothing written there (issue #41)."""

from __future__ import annotations

from pathlib import Path

from tests.batch.scripting import MODELS, rows, write_csv
from tests.cli import run_cli
from tests.crafted_ids import rename_stored, victim_folder
from tests.scripted_server import ScriptedServer


def test_resuming_a_crafted_batch_writes_nothing_outside(
    server: ScriptedServer, work: Path, isolated_home: Path, tmp_path: Path
) -> None:
    victim = victim_folder(tmp_path)
    questions = write_csv(work / "questions.csv", rows(2))
    prices = [f"--price=openai/{model}=1,0" for model in MODELS]
    started = run_cli("batch", "--questions", str(questions), "--setting",
                      "model=openai/good-model,mode=direct", "--api-base", server.base_url,
                      *prices, "--max-cost", "0.000001", home=isolated_home, timeout=300)  # fmt: skip
    assert started.returncode == 1, started.stderr  # its rows are left to resume
    rename_stored(isolated_home, "batch", str(victim))
    resumed = run_cli("batch", "--resume", str(victim), "--max-cost", "5",
                      home=isolated_home, timeout=300)  # fmt: skip
    assert resumed.returncode == 2, resumed.stderr
    assert "is not a valid batch id" in resumed.stderr
    assert len(resumed.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in victim.iterdir()) == ["summary.csv"]
