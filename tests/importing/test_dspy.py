"""DSPy RLM trajectories (`Prediction.trajectory`: `{reasoning, code, output}` steps) imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlm_desktop.importing import import_trajectory
from rlm_desktop.store import Store

STEPS = [
    {"reasoning": "Look at the data first.", "code": "print(len(context))", "output": "5590",
     "max_output_chars": 10000},
    {"reasoning": "Sum the amounts.", "code": "total = 42\nSUBMIT(total)", "output": "SUBMIT: 42",
     "max_output_chars": 10000},
]  # fmt: skip


@pytest.mark.parametrize("shape", ["list", "prediction", "lines"])
def test_each_step_is_a_turn_and_the_submitted_step_the_answer(
    store: Store, tmp_path: Path, shape: str
) -> None:
    path = tmp_path / f"dspy-{shape}.json"
    if shape == "list":
        path.write_text(json.dumps(STEPS, indent=2))
    elif shape == "prediction":
        path.write_text(json.dumps({"trajectory": STEPS, "final_reasoning": "done", "answer": "42"},
                                   indent=2))  # fmt: skip
    else:
        path.write_text("".join(json.dumps(step) + "\n" for step in STEPS))
    imported = import_trajectory(store, path)
    assert (imported.source, imported.calls, imported.turns) == ("dspy", 1, 2)
    assert any("usage" in line for line in imported.left_out)
    shown = store.session(imported.session_id)
    assert (shown["session"]["status"], shown["session"]["answer"]) == ("completed", "42")
    first, second = shown["turns"]
    assert (first["code"], first["stdout"]) == ("print(len(context))", "5590")
    assert "Look at the data first." in first["reply"]
    assert "SUBMIT" in second["code"]


def test_a_trajectory_that_never_submitted_ends_without_an_answer(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "unfinished.json"
    path.write_text(json.dumps(STEPS[:1]))
    session = store.session(import_trajectory(store, path).session_id)["session"]
    assert session["status"] == "error"
    assert "without a submitted answer" in session["error"]
