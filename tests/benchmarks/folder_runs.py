"""`rlm-desktop run` over a big folder, measured from outside as a user would feel it.

A folder of 50 KB text files with one planted line; the arrival server (`--scan`) answers the
first request with code that reads every document and submits the name of the one holding the
line. Measured: spawn to the first request, spawn to the command's end, the peak resident memory
of the command and every process under it (sampled), and how much the data folder grew.
`python -m tests.benchmarks.folder_runs 200` runs one 200 MB folder and prints its figures
(`... 200 --trace`: and where the memory was, process by process, every half second).
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
import threading
import time
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass
from pathlib import Path

import psutil

from tests.benchmarks.arrival_server import arrival_server
from tests.cli import start_cli
from tests.engine.scripting import TEST_MODEL

FILE_BYTES = 50_000
NEEDLE = "the planted line: 7431-heron"
SAMPLE_S = 0.02
TRACE_S = 0.5


@dataclass(frozen=True)
class FolderRun:
    """What one run over a folder cost."""

    first_request_s: float
    whole_s: float
    peak_bytes: int
    data_growth_bytes: int


def make_folder(folder: Path, megabytes: int) -> str:
    """Fill `folder` with `megabytes` MB of 50 KB text files; returns the planted file's name.

    Each file is its own text (words drawn at random, the same every time), as a real folder's
    files are: text repeated across files would flatter whatever dedupes or indexes it.
    """
    folder.mkdir(parents=True, exist_ok=True)
    chance = random.Random(45)
    words = [
        "".join(chance.choices(string.ascii_lowercase, k=chance.randint(2, 9))) for _ in range(5_000)
    ]
    files = max(1, megabytes * 1_000_000 // FILE_BYTES)
    planted = files * 2 // 3
    for number in range(files):
        text = f"report {number}\n" + " ".join(chance.choices(words, k=FILE_BYTES // 5))
        text = text[:FILE_BYTES]
        if number == planted:
            middle = FILE_BYTES // 2
            text = text[:middle] + f"\n{NEEDLE}\n" + text[middle + len(NEEDLE) + 2 :]
        (folder / f"report-{number:05}.txt").write_text(text, encoding="utf-8")
    return f"report-{planted:05}.txt"


def scanning_server() -> AbstractContextManager[tuple[str, subprocess.Popen[str]]]:
    """The arrival server answering with the scan; its base URL and process."""
    return arrival_server("--scan", NEEDLE)


class PeakMemory:
    """The largest sum of resident memory seen over a process and all its descendants; with
    `trace`, a line every `TRACE_S` of each process's (the command first, then its workers)."""

    def __init__(self, pid: int, trace: bool = False) -> None:
        self.peak = 0
        self.trace: list[str] | None = [] if trace else None
        self._started = time.monotonic()
        self._root = psutil.Process(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            sizes = []
            try:
                processes = [self._root, *self._root.children(recursive=True)]
            except psutil.Error:
                return
            for process in processes:
                with suppress(psutil.Error):
                    sizes.append(process.memory_info().rss)
            self.peak = max(self.peak, sum(sizes))
            self._note(sizes)
            self._stop.wait(SAMPLE_S)

    def _note(self, sizes: list[int]) -> None:
        at = time.monotonic() - self._started
        if self.trace is None or len(self.trace) > at / TRACE_S:
            return
        each = " + ".join(f"{size / 1e6:,.0f}" for size in sizes)
        self.trace.append(f"  {at:6.2f} s: {sum(sizes) / 1e6:,.0f} MB = {each}")

    def stop(self) -> int:
        """Stop sampling; the peak in bytes."""
        self._stop.set()
        self._thread.join()
        return self.peak


def folder_size(folder: Path) -> int:
    """Bytes of every file under `folder`."""
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def timed_run(
    folder: Path,
    expected: str,
    home: Path,
    base_url: str,
    server: subprocess.Popen[str],
    trace: bool = False,
) -> FolderRun:
    """One `rlm-desktop run --doc folder`, measured; the answer must hold `expected` (the
    planted file's name, for the scan). `trace` prints each process's memory as it goes."""
    assert server.stdout is not None
    before = folder_size(home) if home.exists() else 0
    spawned = time.monotonic()
    command = start_cli(
        "run", "--api-base", base_url, "--model", TEST_MODEL, "--query", "Which report?",
        "--doc", str(folder), "--json",
        home=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    memory = PeakMemory(command.pid, trace)
    first = float(server.stdout.readline())
    out, err = command.communicate(timeout=900)
    ended = time.monotonic()
    peak = memory.stop()
    print("\n".join(memory.trace or []), flush=True)
    assert command.returncode == 0, err
    answer = json.loads(out)["answer"]
    assert expected in answer, answer
    return FolderRun(first - spawned, ended - spawned, peak, folder_size(home) - before)


def main() -> None:
    """Run one folder of `sys.argv[1]` MB twice (the second run over the same folder); with
    `--trace` after it, each run's processes' memory every half second (the command first)."""
    import tempfile

    megabytes = int(sys.argv[1])
    trace = "--trace" in sys.argv[2:]
    with tempfile.TemporaryDirectory() as temporary, scanning_server() as (url, server):
        root = Path(temporary)
        planted = make_folder(root / "folder", megabytes)
        for label in ("first", "second"):
            run = timed_run(root / "folder", planted, root / "home", url, server, trace)
            print(
                f"{megabytes} MB {label}: first request {run.first_request_s:.2f} s, "
                f"whole {run.whole_s:.2f} s, peak {run.peak_bytes / 1e6:,.0f} MB, "
                f"data +{run.data_growth_bytes / 1e6:,.1f} MB",
                flush=True,
            )


if __name__ == "__main__":
    main()
