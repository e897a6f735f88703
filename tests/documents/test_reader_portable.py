"""The documents' reader on the portable path (`RLM_DESKTOP_PORTABLE=1`), as Windows runs it: no
process group, no address-space limit, no sandbox. A file that outruns its time, or that makes the
reader and what it started hold more memory than the bound, still stops them all.

What a hostile file's parser would do runs in a real reader process (`RunsInTheReader`): here it
starts a process of its own, as pypdf's page workers are started, and then sleeps or fills memory.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator

import psutil
import pytest

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.model import MIB
from rlm_desktop.documents.reader import BoundedReader, ReadTimedOut, out_of_memory
from rlm_desktop.portability import PORTABLE_ENV
from tests.documents.test_reader_confinement import RunsInTheReader

BOUND = 400 * MIB
FILL = "hold = []\nwhile True:\n    hold.append(b'x' * (8 << 20))\n"
NO_LIMIT = """
import resource, subprocess, sys
soft, _ = resource.getrlimit(resource.RLIMIT_AS)
result = b'no limit' if soft == resource.RLIM_INFINITY else f'limited to {soft}'.encode()
"""
STARTS_A_PROCESS = """
import subprocess, sys, time
subprocess.Popen([sys.executable, '-c', {code!r}])
time.sleep(60)
result = b'slept'
"""


@pytest.fixture
def portable(monkeypatch: pytest.MonkeyPatch) -> Iterator[BoundedReader]:
    """A reader started on the portable path; closed after the test."""
    monkeypatch.setenv(PORTABLE_ENV, "1")
    reader = BoundedReader(BOUND)
    yield reader
    reader.close()


def started_by_the_reader(marker: str) -> list[psutil.Process]:
    """The live processes whose command line carries `marker`."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = process.info["cmdline"] or []
        if process.info["status"] != psutil.STATUS_ZOMBIE and any(marker in a for a in cmdline):
            found.append(process)
    return found


def gone(marker: str, within_s: float = 5) -> bool:
    deadline = time.monotonic() + within_s
    while started_by_the_reader(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.skipif(sys.platform == "win32", reason="reads the limit with the resource module")
def test_the_reader_runs_as_on_windows_and_still_reads(portable: BoundedReader) -> None:
    assert portable.read("text", RunsInTheReader(NO_LIMIT), 60).text == "no limit"
    assert portable.read("text", b"plain words", 60).text == "plain words"
    assert portable.sandbox is not None
    assert portable.sandbox.level == "process-only"


def test_a_file_past_its_time_stops_the_processes_its_reader_started(
    portable: BoundedReader,
) -> None:
    marker = uuid.uuid4().hex
    worker = f"import time\ntime.sleep(60)  # {marker}"
    source = STARTS_A_PROCESS.format(code=worker)

    with pytest.raises(ReadTimedOut):
        portable.read("text", RunsInTheReader(source), 3)

    assert gone(marker), "a process the reader started outlived it"
    assert portable.read("text", b"the next file", 60).text == "the next file"


def test_memory_held_past_the_bound_by_the_reader_and_its_processes_stops_them(
    portable: BoundedReader,
) -> None:
    marker = uuid.uuid4().hex
    source = STARTS_A_PROCESS.format(code=f"# {marker}\n{FILL}")
    started = time.monotonic()

    with pytest.raises(Unreadable) as refused:
        portable.read("text", RunsInTheReader(source), 60)

    assert str(refused.value) == out_of_memory(BOUND)
    assert time.monotonic() - started < 30
    assert gone(marker)
    assert portable.read("text", b"the next file", 60).text == "the next file"
