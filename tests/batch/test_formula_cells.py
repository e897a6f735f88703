"""A batch whose model was prompt-injected into answering formulas: `results.csv`, the file
sent back to whoever wrote the questions, holds them as text a spreadsheet will not run."""

from __future__ import annotations

from pathlib import Path

from tests.batch.scripting import write_csv
from tests.formula_cells import FORMULAS, formula_cells, read_csv, run_injected
from tests.scripted_server import ScriptedServer

QUESTIONS = {f"=1+{number} Which code does line {number} give?": f for number, f in
             enumerate(FORMULAS)}  # fmt: skip
"""Each question (itself starting a formula) and the formula the model answers it with."""


def test_answers_that_start_a_formula_reach_results_csv_as_text(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    (tmp_path / "notes.txt").write_text("Line 1 gives code 7.\n", encoding="utf-8")
    entries = [
        {"id": f"q{number}", "question": question, "documents": "notes.txt"}
        for number, question in enumerate(QUESTIONS)
    ]
    questions = write_csv(tmp_path / "questions.csv", entries)
    out = tmp_path / "out"
    summary = run_injected(
        scripted_server, QUESTIONS, isolated_home, out,
        "batch", "--questions", str(questions), "--setting", "model=openai/test-model,mode=rlm",
    )  # fmt: skip
    assert [r["answer"] for r in summary["results"]] == list(FORMULAS)  # the JSON keeps them

    table = read_csv(out / "results.csv")
    assert [row["answer"] for row in table] == [f"'{formula}" for formula in FORMULAS]
    assert [row["question"] for row in table] == [f"'{question}" for question in QUESTIONS]
    assert formula_cells(table) == []
    for row in table:  # numbers the app wrote stay numbers
        assert float(row["cost_usd"]) >= 0
        assert int(row["input_tokens"]) > 0
