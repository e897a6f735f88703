"""The recorded run the app ships is what the recorder makes today, so it cannot rot: a change
to the engine, the store or the export that changes the recording fails here until
`make demo-recording` writes it again. Ids, clocks, addresses and the machine's sandbox differ
between two recordings of the same run and are left out of the comparison (`comparable`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.demo_recording import MEMOS, MEMOS_FILE, QUESTION, RECORDED, comparable_file, record


def test_the_shipped_recording_is_what_the_recorder_makes(tmp_path: Path) -> None:
    shipped = RECORDED / MEMOS_FILE
    assert shipped.is_file(), "no recorded run shipped: run `make demo-recording`"
    made = record(tmp_path)
    assert comparable_file(made) == comparable_file(shipped), (
        "the recorded run changed: run `make demo-recording` and commit what it writes"
    )


def test_the_recording_is_a_finished_run_over_the_memos_with_their_text() -> None:
    lines = [json.loads(line) for line in (RECORDED / MEMOS_FILE).read_text("utf-8").splitlines()]
    head = lines[0]
    assert head["type"] == "metadata"
    assert head["query"] == QUESTION
    assert head["status"] == "completed"
    assert "€950,000" in head["answer"]
    assert all(source["match"] == "exact" for source in head["sources"])
    text = json.dumps(lines, ensure_ascii=False)
    for memo in sorted(MEMOS.iterdir()):  # every memo's text, for coverage and the preview
        first_line = memo.read_text(encoding="utf-8").splitlines()[0]
        assert json.dumps(first_line, ensure_ascii=False)[1:-1] in text, memo.name
