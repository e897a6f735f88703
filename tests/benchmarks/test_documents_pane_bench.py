"""Documents pane benchmark: a folder of 4,000 plain-text files added through the pane (listing,
loading in the loader thread, counting tokens, inserting rows), with the event loop's worst stall
while it loads. Run by `make bench`; figures go to the closing table."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.documents.pane import DocumentsPane
from tests.benchmarks.report import record_figure
from tests.benchmarks.test_ui_bench import StallProbe

pytestmark = pytest.mark.bench

FILES = 4_000
FOLDERS = 40
WORDS = [
    "the",
    "launch",
    "budget",
    "memo",
    "quarter",
    "review",
    "figure",
    "analyst",
    "report",
    "risk",
    "plan",
    "shipped",
]


def plain_folder(root: Path, files: int = FILES) -> Path:
    """`files` text files of 50 to 800 words, spread over `FOLDERS` sub-folders."""
    rng = random.Random(43)
    for number in range(files):
        folder = root / f"group{number % FOLDERS:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(50, 800)))
        (folder / f"note{number:04d}.txt").write_text(words + "\n", encoding="utf-8")
    return root


def test_a_folder_of_4000_files_through_the_pane(
    qtbot: QtBot, qloop: object, tmp_path: Path
) -> None:
    folder = plain_folder(tmp_path / "notes")
    pane = DocumentsPane()
    qtbot.addWidget(pane)
    pane.resize(240, 640)
    pane.show()
    probe = StallProbe()
    probe.start()
    started = time.perf_counter()
    pane.add_paths([folder])
    qtbot.waitUntil(lambda: not pane.loading, timeout=600_000)
    elapsed = time.perf_counter() - started
    probe.stop()
    assert len(pane.documents()) == FILES
    pane.shutdown()
    record_figure("documents pane", f"{FILES:,} text files listed", f"{elapsed:.1f} s")
    record_figure(
        "documents pane",
        f"worst event-loop stall while {FILES:,} files load",
        f"{probe.worst():.0f} ms",
        probe.cpu(),
    )
