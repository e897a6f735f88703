"""Hostile files cost bounded time and memory: the reader is stopped, the file skipped with why.

The bombs are generated here: a 14 KB PDF whose shared content stream keeps pypdf busy for many
minutes, a ~370 KB Word file whose document part inflates to 100 MB, and a 1.4 MB workbook of
20 million cells.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.documents import LoadOptions, load_paths
from rlm_desktop.documents.model import MIB
from rlm_desktop.portability import PORTABLE_ENV
from tests.cli import run_python
from tests.documents.makers import (
    make_docx,
    make_docx_bomb,
    make_slow_pdf,
    make_xlsx,
    make_xlsx_bomb,
)

GOOD_TEXT = "The good file still loads.\n"

MEASURE_LOAD = """
import json, resource, sys
from rlm_desktop.documents import LoadOptions, load_paths
from rlm_desktop.documents.model import MIB

result = load_paths(sys.argv[2:], LoadOptions(max_read_memory_bytes=int(sys.argv[1]) * MIB))
print(json.dumps({
    "errors": [[str(e.path), e.message] for e in result.errors],
    "documents": [d.name for d in result.documents],
    "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "children_peak_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
}))
"""


FRESH_PROCESS = """
import subprocess, sys
sys.exit(subprocess.run([sys.executable, "-c", *sys.argv[1:]]).returncode)
"""
"""Runs the script in a grandchild: Linux carries the peak RSS of the image a process replaces
into its own `ru_maxrss`, so a process started straight from a grown test runner would report the
runner's peak; started from this small process, it reports its own."""


def test_a_pdf_that_keeps_the_reader_busy_is_stopped_at_the_per_file_limit(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    bomb = make_slow_pdf(folder / "bomb.pdf")
    (folder / "notes.txt").write_text(GOOD_TEXT, encoding="utf-8")

    in_folder = load_paths([folder], LoadOptions(max_read_seconds=2))
    named = load_paths([bomb, folder / "notes.txt"], LoadOptions(max_read_seconds=2))

    assert [d.text for d in in_folder.documents] == [GOOD_TEXT]
    [skipped] = in_folder.skipped
    assert skipped.path == bomb
    assert skipped.reason == (
        "still being read after 2 s (the per-file time limit), so reading it was stopped; "
        "convert it to text with another tool and load that"
    )
    assert [d.text for d in named.documents] == [GOOD_TEXT]
    assert [(e.path, e.message) for e in named.errors] == [(bomb, skipped.reason)]
    assert multiprocessing.active_children() == []  # the stopped reader is gone, not left running


def test_the_runs_time_limit_covers_loading(tmp_path: Path) -> None:
    first, late = tmp_path / "first.txt", tmp_path / "late.txt"
    first.write_text(GOOD_TEXT, encoding="utf-8")
    late.write_text(GOOD_TEXT, encoding="utf-8")
    bomb = make_slow_pdf(tmp_path / "bomb.pdf")

    result = load_paths([first, bomb, late], LoadOptions(deadline=time.monotonic() + 3))

    assert [d.path for d in result.documents] == [first]
    assert [(e.path, e.message.split(";")[0]) for e in result.errors] == [
        (bomb, "the run's time limit ran out while it was being read, so reading it was stopped"),
        (late, "not read: the run's time limit ran out while loading the documents before it"),
    ]


LIMIT_MB = 400
WATCH_SLACK_MB = 64
"""What the reader may pass its bound by on the portable path, where the application watches its
memory rather than the kernel refusing it (reader_processes.py): what it allocates in one look."""
BOUNDS = pytest.mark.parametrize(
    "env", [{}, {PORTABLE_ENV: "1"}], ids=["kernel-bound", "watched-as-on-windows"]
)


def bounded_load(home: Path, *paths: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Load `paths` in a fresh process with a `LIMIT_MB` memory bound per file (`env` added to
    its environment): what it loaded, refused, and the peak memory of it and of its reader; the
    reader keeps its bound and the application never holds what a bomb inflates to."""
    done = run_python(
        *("-c", FRESH_PROCESS, MEASURE_LOAD, str(LIMIT_MB), *map(str, paths)),
        home=home,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    measured: dict[str, Any] = json.loads(done.stdout)
    limit_kb = LIMIT_MB * MIB // 1024
    slack_kb = WATCH_SLACK_MB * 1024 if env else 0
    assert measured["children_peak_kb"] <= limit_kb + slack_kb  # the reader kept its bound
    assert measured["peak_kb"] < limit_kb  # and the application never held the inflated text
    return measured


@BOUNDS
def test_a_docx_that_inflates_past_the_memory_bound_is_stopped(
    tmp_path: Path, isolated_home: Path, env: dict[str, str]
) -> None:
    bomb = make_docx_bomb(tmp_path / "bomb.docx")
    after = make_docx(tmp_path / "after.docx", "Still here", ["The next file loads."])
    measured = bounded_load(isolated_home, bomb, after, env=env)
    assert measured["errors"] == [
        [
            str(bomb),
            "its parts inflate to 96.2 MB (a zip bomb?), more than can be read within the "
            "400.0 MB of memory reading may use, so it was not read; convert it to text with "
            "another tool and load that",
        ]
    ]  # refused from its ZIP directory, before anything was inflated
    assert measured["documents"] == ["after.docx"]


@BOUNDS
def test_a_sheet_of_20_000_by_1_000_cells_is_stopped_at_the_memory_bound(
    tmp_path: Path, isolated_home: Path, env: dict[str, str]
) -> None:
    bomb = make_xlsx_bomb(tmp_path / "bomb.xlsx", rows=20_000, columns=1_000)  # 1 MB on disk
    after = make_xlsx(tmp_path / "after.xlsx", "Sheet", [["the next file loads"]])
    measured = bounded_load(isolated_home, bomb, after, env=env)
    [(path, message)] = measured["errors"]
    assert path == str(bomb)
    assert "400.0 MB" in message
    assert message.endswith("convert it to text with another tool and load that")
    assert measured["documents"] == ["after.xlsx"]
