"""Growth curves: `rlm-desktop run` over 10 MB, 100 MB and 1 GB folders, twice each.

Each size gets a folder of 50 KB text files with one planted line, a fresh data folder, and the
scanning arrival server (`folder_runs`): the root's code reads every document and answers with
the name of the one holding the line. The first run stores the documents; the second, over the
same folder and data folder, finds them known. Reported: spawn to the first request, the whole
run, the peak resident memory of the command and every process under it (and its ratio to the
text), and how much the data folder grew. Targets (issue #45): 200 MB → first request ≤ 6 s and
peak ≤ 2.5× the text; 1 GB → first request ≤ 25 s; a second run ≤ 3 s to its first request.
Run with `make bench`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks.folder_runs import FolderRun, make_folder, scanning_server, timed_run
from tests.benchmarks.report import record_figure

pytestmark = pytest.mark.bench

MB = 1_000_000


def described(run: FolderRun, megabytes: int) -> str:
    return (
        f"first request {run.first_request_s:.2f} s · whole {run.whole_s:.2f} s · "
        f"peak {run.peak_bytes / MB:,.0f} MB ({run.peak_bytes / (megabytes * MB):.1f}× the text) · "
        f"data +{run.data_growth_bytes / MB:,.1f} MB"
    )


@pytest.mark.parametrize("megabytes", [10, 100, 1000])
def test_a_folder_run_grows_with_the_folder(megabytes: int, tmp_path: Path) -> None:
    folder, home = tmp_path / "folder", tmp_path / "home"
    planted = make_folder(folder, megabytes)
    with scanning_server() as (url, server):
        first = timed_run(folder, planted, home, url, server)
        second = timed_run(folder, planted, home, url, server)
    name = f"`rlm-desktop run` over {megabytes:,} MB ({megabytes * MB // 50_000:,} files)"
    record_figure("growth", f"{name}, first run", described(first, megabytes))
    record_figure("growth", f"{name}, second run over it", described(second, megabytes))
