"""A worker keeps its variables for a later question, and a new worker in the sandbox restores them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlm_desktop.engine.sandbox.kernel.launcher import Launcher
from rlm_desktop.engine.sandbox.process import WorkerProcess

FIRST_QUESTION = """
import json, collections
totals = {"north": 12, "south": 30}
rows = [("a", 1), ("b", 2)]
def share(region):
    return totals[region] / sum(totals.values())
class Finding:
    def __init__(self, text):
        self.text = text
    def shout(self):
        return self.text.upper()
found = Finding("late payments")
counter = collections.Counter("abracadabra")
squares = (n * n for n in range(3))
pick = lambda n: n + 1
blob = "x" * 3_000_000
"""

LATER_QUESTION = """
print(totals["south"], rows[1], round(share("south"), 2))
print(found.shout(), counter["a"], json.dumps([1]))
print(sorted(n for n in ("squares", "pick", "blob") if n in globals()))
"""


async def no_calls(op: str, args: dict[str, Any]) -> Any:
    raise AssertionError("no sub-calls expected")


def worker_in(folder: Path, launcher: Launcher, **seed: Any) -> WorkerProcess:
    return WorkerProcess(
        seed.pop("context", "the documents"),
        [],
        scratch_dir=folder,
        memory_limit_mb=None,
        output_cap_chars=100_000,
        handler=no_calls,
        launcher=launcher,
        **seed,
    )


async def test_values_functions_classes_and_modules_come_back_in_a_new_worker(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    launcher = Launcher(run, 100_000)
    try:
        first = worker_in(run / "c1", launcher)
        await first.start()
        outcome = await first.execute(FIRST_QUESTION, 30)
        assert outcome.error is None
        pieces: list[bytes] = []
        kept = await first.save_state(2_000_000, pieces.append, 3_000_000, 30)
        await first.close()

        assert kept.error is None
        assert {"totals", "rows", "share", "Finding", "found", "counter", "json"} <= set(kept.kept)
        assert "collections" in kept.kept
        assert "generator" in kept.lost["squares"]
        assert "lambda" in kept.lost["pick"]
        assert "too large" in kept.lost["blob"]
        assert "context" not in kept.kept
        assert "history" not in kept.kept

        assert kept.size_bytes == sum(len(piece) for piece in pieces) > 0
        later = worker_in(run / "c2", launcher)
        await later.start()
        restored = await later.restore_state(b"".join(pieces), 30)
        outcome = await later.execute(LATER_QUESTION, 30)
        await later.close()
    finally:
        await launcher.close()

    assert restored.error is None
    assert set(restored.kept) == set(kept.kept)
    assert outcome.error is None, outcome.error
    assert outcome.stdout.splitlines() == [
        "30 ('b', 2) 0.71",
        "LATE PAYMENTS 5 [1]",
        "[]",
    ]


async def test_a_damaged_state_restores_nothing_and_says_why(tmp_path: Path) -> None:
    launcher = Launcher(tmp_path / "run", 100_000)
    try:
        worker = worker_in(tmp_path / "run" / "c1", launcher)
        await worker.start()
        restored = await worker.restore_state(b"not a pickle", 30)
        await worker.close()
    finally:
        await launcher.close()
    assert restored.kept == ()
    assert restored.error is not None
    assert "UnpicklingError" in restored.error


async def test_contexts_histories_and_history_are_in_the_repl(tmp_path: Path) -> None:
    earlier = [{"role": "user", "content": "Question: first?"}]
    launcher = Launcher(tmp_path / "run", 100_000)
    try:
        worker = worker_in(
            tmp_path / "run" / "c1",
            launcher,
            context=["a", "b"],
            contexts=["added later"],
            histories=[earlier],
        )
        await worker.start()
        worker.extend_history([{"role": "system", "content": "sys"}])
        worker.extend_history([{"role": "user", "content": "Question: now?"}])
        shown = await worker.execute(
            "print(context_0 is context, context_1, history_0[0]['content'])\n"
            "print([m['role'] for m in history])\nprint(SHOW_VARS())",
            30,
        )
        history_after_restart = await worker.execute("history = None", 30)
        await worker.restart()
        after = await worker.execute("print(len(history), history[-1]['content'])", 30)
        await worker.close()
    finally:
        await launcher.close()
    assert shown.error is None, shown.error
    assert shown.stdout.splitlines() == [
        "True added later Question: first?",
        "['system', 'user']",
        "{}",
    ]
    assert "history" in history_after_restart.restored
    assert after.stdout.strip() == "2 Question: now?"


async def test_a_state_larger_than_its_limit_is_refused_whatever_model_code_sends(
    tmp_path: Path,
) -> None:
    """Model code replaces the worker's `save_state` and sends piece after piece: the app takes
    no more than its limit, and says the state was refused (issue #41: nothing fills the disk)."""
    flood = (
        "import sys\n"
        "serve = sys.modules['rlm_worker.serve']\n"
        "def flood(repl, cap_bytes, send):\n"
        "    for _ in range(24):\n"
        "        send(b'x' * (256 * 1024))\n"
        "    return {'type': 'state_saved', 'saved': ['x'], 'skipped': {}, 'bytes': 1}\n"
        "serve.save_state = flood\n"
    )
    launcher = Launcher(tmp_path / "run", 100_000)
    pieces: list[bytes] = []
    try:
        worker = worker_in(tmp_path / "run" / "c1", launcher)
        await worker.start()
        assert (await worker.execute(flood, 30)).error is None
        report = await worker.save_state(1_000_000, pieces.append, 2_000_000, 30)
        still = await worker.execute("print('alive')", 30)
        await worker.close()
    finally:
        await launcher.close()
    assert report.error == "the saved state is larger than 2 MB"
    assert report.lost == {"x": "its saved state was refused"}
    assert sum(map(len, pieces)) <= 2_000_000
    assert still.stdout.strip() == "alive"
