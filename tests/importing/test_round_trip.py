"""Our own JSONL export imported again: the same answer, calls, turns, code, outputs, sources,
findings and timings, for real runs of five shapes; with `--with-documents`, the same
documents (so coverage and verified sources too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlm_desktop.commands.health import health_json
from rlm_desktop.exports import export
from rlm_desktop.importing import import_trajectory
from rlm_desktop.review.health import session_health
from rlm_desktop.store import Store
from tests.store.real_sessions import real_sessions

__all__ = ["real_sessions"]

Sessions = tuple[Store, dict[str, str]]
SHAPES = ("fanout", "depth2", "failed", "timeout", "cancelled")
SESSION_KEYS = ("query", "status", "answer", "error", "model", "sub_model", "mode", "chosen_mode",
                "cost_usd", "input_tokens", "output_tokens", "turns", "sub_calls",
                "max_depth_reached", "unpriced", "started_at", "ended_at")  # fmt: skip


def _imported_again(sessions: Sessions, shape: str, tmp_path: Path, **options: bool) -> str:
    store, ids = sessions
    path = tmp_path / f"{shape}.jsonl"
    path.write_text(export(store, ids[shape], "jsonl", **options), encoding="utf-8")
    return import_trajectory(store, path).session_id


@pytest.mark.parametrize("shape", SHAPES)
def test_an_exported_session_imports_as_the_same_run(
    real_sessions: Sessions, shape: str, tmp_path: Path
) -> None:
    store, ids = real_sessions
    again = _imported_again(real_sessions, shape, tmp_path, with_documents=True)
    before, after = store.session(ids[shape]), store.session(again)
    for key in SESSION_KEYS:
        assert after["session"][key] == before["session"][key], key
    assert after["session"]["wall_s"] == pytest.approx(before["session"]["wall_s"])
    assert after["calls"] == before["calls"]  # ids, parents, kinds, depths, models, times, usage
    assert after["turns"] == before["turns"]  # code, output, errors, durations
    assert health_json(session_health(store, again)) == health_json(
        session_health(store, ids[shape])
    )
    assert store.document_texts(again) == store.document_texts(ids[shape])
    assert before["session"]["imported"] is None
    assert after["session"]["imported"]["format"] == "rlm-desktop"


def test_without_documents_only_their_names_leave_and_the_import_says_so(
    real_sessions: Sessions, tmp_path: Path
) -> None:
    store, ids = real_sessions
    text = export(store, ids["fanout"], "jsonl")
    meta = json.loads(text.splitlines()[0])
    assert meta["documents"] == [{"name": "ledger.txt"}]
    assert '"type": "document"' not in text
    path = tmp_path / "names-only.jsonl"
    path.write_text(text, encoding="utf-8")
    imported = import_trajectory(store, path)
    assert any("--with-documents" in line for line in imported.left_out)
    assert store.document_texts(imported.session_id) == []
    assert [d["name"] for d in store.session(imported.session_id)["session"]["documents"]] == [
        "ledger.txt"
    ]


def test_an_imported_session_replays_as_its_original_does(
    real_sessions: Sessions, tmp_path: Path
) -> None:
    store, ids = real_sessions
    again = _imported_again(real_sessions, "depth2", tmp_path)
    kinds = [type(event).__name__ for event in store.replay(again)]
    original = [type(event).__name__ for event in store.replay(ids["depth2"])]
    assert kinds[0] == "RunStarted"
    assert kinds[-1] == "RunFinished"
    for kind in ("CallStarted", "TurnExecuted", "CellExecuted", "AnswerSubmitted"):
        assert kinds.count(kind) == original.count(kind), kind
