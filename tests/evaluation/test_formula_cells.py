"""An evaluation over a shared task file whose model was prompt-injected into answering formulas
(and whose gold answers are formulas too): `runs.csv` holds them as text a spreadsheet will not
run, and `summary.csv` holds no formula either."""

from __future__ import annotations

import json
from pathlib import Path

from tests.formula_cells import FORMULAS, formula_cells, read_csv, run_injected
from tests.scripted_server import ScriptedServer

QUESTIONS = {f"Which code does line {number} give?": f for number, f in enumerate(FORMULAS)}


def test_answers_that_start_a_formula_reach_runs_csv_as_text(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    tasks = tmp_path / "shared" / "tasks.jsonl"
    tasks.parent.mkdir()
    tasks.write_text(
        "".join(
            json.dumps({"id": f"t{number}", "question": question, "answer": formula,
                        "context": f"Line {number} gives a code."}) + "\n"
            for number, (question, formula) in enumerate(QUESTIONS.items())
        ),
        encoding="utf-8",
    )  # fmt: skip
    out = tmp_path / "out"
    summary = run_injected(
        scripted_server, QUESTIONS, isolated_home, out,
        "eval", "--task", str(tasks), "--setting", "plain:model=openai/test-model,mode=rlm",
    )  # fmt: skip
    assert summary["settings"][0]["score_mean"] == 1.0  # each answer was right

    runs = sorted(read_csv(out / "runs.csv"), key=lambda row: row["task_id"])
    assert [row["answer"] for row in runs] == [f"'{formula}" for formula in FORMULAS]
    assert [row["gold"] for row in runs] == [f"'{formula}" for formula in FORMULAS]
    assert formula_cells(runs) == []
    assert {float(row["score"]) for row in runs} == {1.0}  # numbers the app wrote stay numbers
    settings = read_csv(out / "summary.csv")
    assert formula_cells(settings) == []
    assert float(settings[0]["score_mean"]) == 1.0
