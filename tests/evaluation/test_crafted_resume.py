"""`eval --resume ID` with an id from a shared sessions.db that names a folder of the user's:
refused in one line, nothing written there (issue #41)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.crafted_ids import rename_stored, victim_folder
from tests.evaluation.scripting import MODELS, PRICES
from tests.scripted_server import ScriptedServer


@pytest.mark.parametrize("form", ["absolute", "relative"])
def test_resuming_a_crafted_evaluation_writes_nothing_outside(
    isolated_home: Path, tmp_path: Path, form: str
) -> None:
    victim = victim_folder(tmp_path)
    server = ScriptedServer(models=MODELS).start()
    try:
        started = run_cli(
            "eval", "--task", "needle", "--count", "1", "--length", "300",
            "--setting", f"model=openai/{MODELS[0]},mode=direct", "--api-base", server.base_url,
            *PRICES, "--max-cost", "0.000001", home=isolated_home, timeout=300,
        )  # fmt: skip
        assert started.returncode == 1, started.stderr  # its one run is left to resume
        climb = "../" * (len(isolated_home.parts) + 1)
        crafted = str(victim) if form == "absolute" else climb + str(victim.relative_to("/"))
        rename_stored(isolated_home, "evaluation", crafted)
        resumed = run_cli(
            "eval", "--resume", crafted, "--max-cost", "5", home=isolated_home, timeout=300
        )
    finally:
        server.stop()
    assert resumed.returncode == 2, resumed.stderr
    assert "is not a valid evaluation id" in resumed.stderr
    assert len(resumed.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in victim.iterdir()) == ["summary.csv"]
    assert (victim / "summary.csv").read_text() == "the user's own figures\n"
