"""Import benchmarks: a 1,000-call session exported as JSONL and imported into another store, and
the same file recognised the second time.

Run with `make bench` (or `pytest tests/benchmarks/test_import_bench.py -m bench -s`).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.exports import export_bytes
from rlm_desktop.importing import import_trajectory
from rlm_desktop.store import Store
from tests.benchmarks.report import record_figure
from tests.store.synthetic import FakeRun, run_events

TURNS, CALLS_PER_TURN = 10, 100
SITTINGS = 3


def _session(store: Store) -> str:
    """A saved run of `TURNS` root turns fanning out to `CALLS_PER_TURN` sub-calls each."""
    run = FakeRun("import-bench", EventBus())
    recorder = store.record(run)
    for event in run_events(run.run_id, turns=TURNS, calls_per_turn=CALLS_PER_TURN):
        run.bus.publish(event)
    recorder.close()
    return run.run_id


@pytest.mark.bench
def test_a_1000_call_session_exported_and_imported(tmp_path: Path) -> None:
    source = Store(tmp_path / "here.db")
    try:
        session_id = _session(source)
        started = time.perf_counter()
        data = export_bytes(source, session_id, "jsonl", with_documents=True)
        exported_s = time.perf_counter() - started
    finally:
        source.close()
    log = tmp_path / "shared.jsonl"
    log.write_bytes(data)

    imports, again = [], []
    for sitting in range(SITTINGS):
        target = Store(tmp_path / f"there-{sitting}.db")
        try:
            started = time.perf_counter()
            imported = import_trajectory(target, log)
            imports.append(time.perf_counter() - started)
            started = time.perf_counter()
            duplicate = import_trajectory(target, log)
            again.append(time.perf_counter() - started)
        finally:
            target.close()
        assert imported.calls == 1 + TURNS * CALLS_PER_TURN  # what was measured happened
        assert duplicate.duplicate
        assert duplicate.session_id == imported.session_id

    size = f"{len(data) / 1e6:.2f} MB"
    record_figure(
        "import",
        f"a {1 + TURNS * CALLS_PER_TURN:,}-call session: export ({size} JSONL) / import "
        f"(median of {SITTINGS}) / the same file again",
        f"{exported_s:.2f} s / {statistics.median(imports):.2f} s / "
        f"{statistics.median(again) * 1000:.0f} ms",
    )
