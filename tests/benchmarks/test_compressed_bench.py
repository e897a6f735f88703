"""Compressed logs (#43, item 4): loading a folder of gzipped rotated logs against the same logs
plain, and one big gzipped log against the same log plain, each in a fresh process, alternated
and repeated in one run so the ratio compares like with like on a busy machine.

The `.gz` files are decompressed in the bounded reader (a worker process), so the ratio holds
the reader's start and the pipe both ways; a third figure decompresses the same files in the
measuring process itself (the readers the worker runs, without the worker), which is what
reading them in the application's process would cost instead.
Run with `make bench`.
"""

from __future__ import annotations

import gzip
import json
import random
import statistics
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.benchmarks.report import record_figure
from tests.cli import run_python

pytestmark = pytest.mark.bench

LOGS = 1000
LOG_BYTES = 20_000
BIG_LOG_BYTES = 100_000_000
REPEATS = 3
MB = 1_000_000

MEASURE = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from rlm_desktop.documents import LoadOptions, load_paths

    started = time.perf_counter()
    result = load_paths([Path(sys.argv[1])], LoadOptions(exact_token_chars=0))
    seconds = time.perf_counter() - started
    print(json.dumps({
        "seconds": seconds, "files": len(result.documents),
        "chars": result.totals.chars, "errors": [str(e) for e in result.errors],
        "skipped": [str(s) for s in result.skipped],
    }))
""")

IN_PROCESS = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from rlm_desktop.documents.extract import extract
    from rlm_desktop.documents.inflate import Inflate

    paths = sorted(Path(sys.argv[1]).rglob("*.gz"))
    started = time.perf_counter()
    chars = sum(
        len(extract("text", path.read_bytes(), inflate=Inflate("gzip", 256 << 20)).text)
        for path in paths
    )
    print(json.dumps({"seconds": time.perf_counter() - started, "files": len(paths),
                      "chars": chars}))
""")


def _line(rng: random.Random, number: int) -> str:
    level = rng.choice(("INFO", "INFO", "INFO", "WARN", "ERROR"))
    user, took = rng.randrange(10_000), rng.randrange(1, 900)
    clock = f"10:{number // 60 % 60:02d}:{number % 60:02d}"
    return f"2025-03-14 {clock} {level} request user={user} took={took}ms\n"


def _log(rng: random.Random, size: int) -> bytes:
    lines, written, number = [], 0, 0
    while written < size:
        line = _line(rng, number)
        lines.append(line)
        written += len(line)
        number += 1
    return "".join(lines).encode()


def _write(folder: Path, name: str, data: bytes) -> None:
    (folder / "plain").mkdir(parents=True, exist_ok=True)
    (folder / "packed").mkdir(parents=True, exist_ok=True)
    (folder / "plain" / name).write_bytes(data)
    (folder / "packed" / f"{name}.gz").write_bytes(gzip.compress(data, compresslevel=6))


def _run(script: str, folder: Path, home: Path) -> dict[str, Any]:
    done = run_python("-c", script, str(folder), home=home, timeout=600)
    assert done.returncode == 0, done.stderr
    figures: dict[str, Any] = json.loads(done.stdout)
    assert figures.get("errors", []) == figures.get("skipped", []) == []
    return figures


def _compare(name: str, folder: Path, home: Path, files: int, in_process: bool) -> None:
    plain: list[float] = []
    packed: list[float] = []
    here: list[float] = []
    for _ in range(REPEATS):  # alternated: a busy spell costs both sides alike
        plain_figures = _run(MEASURE, folder / "plain", home)
        packed_figures = _run(MEASURE, folder / "packed", home)
        assert plain_figures["files"] == packed_figures["files"] == files
        assert plain_figures["chars"] == packed_figures["chars"]
        plain.append(plain_figures["seconds"])
        packed.append(packed_figures["seconds"])
        if in_process:
            here.append(_run(IN_PROCESS, folder / "packed", home)["seconds"])
    plain_s, packed_s = statistics.median(plain), statistics.median(packed)
    stored = sum(p.stat().st_size for p in (folder / "packed").iterdir()) / MB
    detail = (
        f"plain {plain_s:.2f} s, gzipped {packed_s:.2f} s (medians of {REPEATS}, "
        f"{stored:.1f} MB gzipped)"
    )
    if here:
        alone = statistics.median(here)
        detail += f"; their decompression and decoding alone, in one process: {alone:.2f} s"
    record_figure("documents", name, f"{packed_s / plain_s:.2f}x", detail)


def test_a_folder_of_gzipped_rotated_logs_against_the_same_logs_plain(
    tmp_path: Path, isolated_home: Path
) -> None:
    rng = random.Random(43)
    for number in range(LOGS):
        _write(tmp_path, f"app.log.{number + 1}", _log(rng, LOG_BYTES))
    _compare(
        f"{LOGS:,} gzipped logs of {LOG_BYTES // 1000} KB / plain",
        tmp_path,
        isolated_home,
        LOGS,
        in_process=True,
    )


def test_one_big_gzipped_log_against_the_same_log_plain(
    tmp_path: Path, isolated_home: Path
) -> None:
    _write(tmp_path, "huge.log", _log(random.Random(44), BIG_LOG_BYTES))
    _compare(
        f"one {BIG_LOG_BYTES // MB} MB gzipped log / plain",
        tmp_path,
        isolated_home,
        1,
        in_process=False,
    )
