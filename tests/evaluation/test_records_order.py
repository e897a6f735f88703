"""Past evaluations are listed newest first even when several began within one second (their
recorded time is to the second; the order they were recorded in decides)."""

from __future__ import annotations

from pathlib import Path

from rlm_desktop.evaluation.records import EvaluationRecords
from rlm_desktop.store import Store


def test_evaluations_begun_within_one_second_list_newest_first(tmp_path: Path) -> None:
    store = Store(tmp_path / "sessions.db")
    records = EvaluationRecords(store)
    made = [f"20261207-023912-{n:06x}" for n in (0xF00000, 0x000001, 0x800000, 0x000002)] * 3
    made = [f"{eid}-{n}" for n, eid in enumerate(made)]  # ids that do not sort by age
    for evaluation_id in made:
        records.create(evaluation_id, {"kinds": []}, [], {})
    listed = [record.id for record in records.all()]
    assert len({record.created_at for record in records.all()}) < len(made)  # seconds shared
    assert listed == made[::-1]
    store.close()
