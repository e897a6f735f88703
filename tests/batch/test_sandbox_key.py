"""A batch's `sandbox` key, as its default `--setting` or a row's own column: each row's run
takes it, and its saved session says which sandbox ran its model code; a value that is none of
auto, kernel or wasm is one line naming the row and the key."""

from __future__ import annotations

import json
from pathlib import Path

from tests.batch.scripting import GOOD, PRICES, rows, write_csv
from tests.batch.stored import query
from tests.cli import run_cli
from tests.scripted_server import ScriptedServer


def test_each_row_runs_in_the_sandbox_its_setting_names(
    server: ScriptedServer, work: Path, wasm_guest: Path, isolated_home: Path
) -> None:
    entries = rows(2)
    entries[0]["sandbox"] = "wasm"
    questions = write_csv(work / "questions.csv", entries, extra=("sandbox",))
    done = run_cli("batch", "--questions", str(questions), "--api-base", server.base_url,
                   "--setting", f"model=openai/{GOOD},mode=rlm,depth=1", *PRICES, "--json",
                   home=isolated_home, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert [result["status"] for result in summary["results"]] == ["completed", "completed"]
    levels = dict(
        query(
            isolated_home,
            "SELECT b.row_id, s.sandbox FROM batch_sessions b JOIN sessions s "
            "ON s.id = b.session_id",
        )
    )
    assert levels[entries[0]["id"]].startswith("wasm+wasmtime"), levels
    assert not levels[entries[1]["id"]].startswith("wasm"), levels


def test_a_bad_sandbox_names_the_row_and_the_key(
    server: ScriptedServer, work: Path, isolated_home: Path
) -> None:
    entries = rows(2)
    entries[1]["sandbox"] = "docker"
    questions = write_csv(work / "questions.csv", entries, extra=("sandbox",))
    done = run_cli("batch", "--questions", str(questions), "--api-base", server.base_url,
                   "--setting", f"model=openai/{GOOD}", home=isolated_home)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"rlm-desktop batch: {questions}:3: sandbox must be auto, kernel or wasm"
    )
    default = run_cli("batch", "--questions", str(questions), "--api-base", server.base_url,
                      "--setting", f"model=openai/{GOOD},sandbox=vm",
                      home=isolated_home)  # fmt: skip
    assert default.returncode == 2, default.stderr
    assert "sandbox must be auto, kernel or wasm" in default.stderr
    assert len(default.stderr.strip().splitlines()) == 1
    assert query(isolated_home, "SELECT COUNT(*) FROM sessions") in ([], [(0,)])
