"""The fixed start: from spawning `rlm-desktop run` to its first request at the server.

Run with `make bench` (or `pytest tests/benchmarks/test_start_bench.py -m bench -s`). A folder of
20 × 50 KB text files (1 MB), the scripted server in a process of its own saying when each chat
request arrived (`arrival_server`), and the command as a user starts it; one warm-up, then five
runs, each in a fresh data folder. Reported against the 2 s target, not asserted.
"""

from __future__ import annotations

import statistics
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.benchmarks.arrival_server import ANSWER, arrival_server
from tests.benchmarks.folder_runs import timed_run
from tests.benchmarks.report import record_figure

FILES = 20
FILE_CHARS = 50_000
RUNS = 5
TARGET_S = 2.0


@pytest.fixture
def one_mb_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    for number in range(FILES):
        line = f"report {number}: the quarter's figures, nothing out of the ordinary.\n"
        text = (line * (FILE_CHARS // len(line) + 1))[:FILE_CHARS]
        (folder / f"report-{number:02}.txt").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def arrivals() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The arrival server's base URL, and the process whose stdout says when requests came."""
    with arrival_server() as served:
        yield served


def timed_start(
    folder: Path, home: Path, base_url: str, server: subprocess.Popen[str]
) -> tuple[float, float]:
    """Seconds from the spawn to the first request, and to the command's end."""
    run = timed_run(folder, ANSWER, home, base_url, server)
    return run.first_request_s, run.whole_s


def spread(values: list[float]) -> str:
    """min / median / max, in seconds."""
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f} s"


@pytest.mark.bench
def test_spawn_to_first_request_on_a_1_mb_folder(
    one_mb_folder: Path,
    arrivals: tuple[str, subprocess.Popen[str]],
    tmp_path: Path,
) -> None:
    base_url, server = arrivals
    timed_start(one_mb_folder, tmp_path / "home-warm-up", base_url, server)
    firsts, wholes = [], []
    for run in range(RUNS):
        first, whole = timed_start(one_mb_folder, tmp_path / f"home-{run}", base_url, server)
        firsts.append(first)
        wholes.append(whole)
    median = statistics.median(firsts)
    verdict = "met" if median <= TARGET_S else "missed"
    record_figure(
        "start",
        f"`rlm-desktop run` on a 1 MB folder (20 files), spawn to first request (min / median / max of {RUNS})",
        spread(firsts),
        f"target ≤ {TARGET_S:g} s at the median: {verdict}; whole run {spread(wholes)}",
    )
