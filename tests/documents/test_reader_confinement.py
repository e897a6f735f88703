"""The bounded reader as an attacker who controls a parser sees it: code running in the reader
process (as a memory-corruption bug in PDFium, lxml, calamine or onnxruntime, triggered by a
hostile file, would run it) reads nothing of the user's, writes nothing, reaches no network and
cannot run code in the application through its answers.

The code runs in a real reader process, started as the loader starts it: the reader takes its
requests unpickled, so bytes whose unpickling calls `eval` run there, after the reader has set
itself up, exactly where a parser would run; what the code saw comes back as the text read.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import COMPRESSED_TYPES
from rlm_desktop.documents.reader import BoundedReader
from rlm_desktop.engine.sandbox.kernel import seccomp
from rlm_desktop.engine.sandbox.kernel.confine import (
    SYS_LANDLOCK_CREATE_RULESET,
    landlock_abi,
    load_libc,
)
from tests.cli import run_python
from tests.documents.conftest import EXPECTED
from tests.engine.test_confinement import (
    NAMESPACES,
    SECCOMP,
    needs_isolation,
    needs_landlock,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

LANDLOCK = landlock_abi()
MEMORY = 1 << 30


class RunsInTheReader(bytes):
    """A file's bytes that run `source` in the reader process when it unpickles them; `source`
    leaves what it found as bytes in `result`, which the reader then reads as a text file."""

    source: str

    def __new__(cls, source: str) -> RunsInTheReader:
        made = super().__new__(cls)
        made.source = source
        return made

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return eval, (f"(exec({self.source!r}, found := {{}}), found['result'])[1]",)


ATTEMPT = """
import json, os, socket
def attempt(action):
    try:
        action()
    except OSError as error:
        return f"refused ({type(error).__name__})"
    return "done"
"""


REFUSED_ANSWER = (
    "the reader process sent an answer the app does not accept (the file may be crafted to "
    "attack its parser), so reading it was stopped; please report this"
)


def _run_in_reader(source: str, seconds: float = 60) -> str:
    reader = BoundedReader(MEMORY)
    try:
        return reader.read("text", RunsInTheReader(ATTEMPT + source), seconds).text
    finally:
        reader.close()


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP listener on 127.0.0.1 that the reader process must not reach."""
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    yield server
    server.close()


@needs_landlock
@needs_isolation
def test_code_run_by_a_parser_reads_writes_and_reaches_nothing(
    tmp_path: Path, listener: socket.socket
) -> None:
    key = tmp_path / "home" / ".ssh" / "id_ed25519"
    key.parent.mkdir(parents=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY----- planted by the test")
    key.chmod(0o600)
    documents = tmp_path / "documents"
    documents.mkdir()
    (documents / "report.pdf").write_bytes(b"%PDF-1.7 the file being read")
    planted = documents / "planted.txt"
    port = listener.getsockname()[1]

    found = json.loads(
        _run_in_reader(
            f"result = json.dumps({{\n"
            f"    'read the key': attempt(lambda: open({str(key)!r}).read()),\n"
            f"    'list the home': attempt(lambda: os.listdir({str(key.parent.parent)!r})),\n"
            f"    'write beside the document': attempt(\n"
            f"        lambda: open({str(planted)!r}, 'w').write('planted')),\n"
            f"    'make the key readable': attempt(lambda: os.chmod({str(key)!r}, 0o644)),\n"
            f"    'connect': attempt(\n"
            f"        lambda: socket.create_connection(('127.0.0.1', {port}), timeout=5)),\n"
            f"    'signal the app': attempt(lambda: os.kill({os.getpid()}, 0)),\n"
            f"}}).encode()\n"
        )
    )

    refused = {name: outcome.startswith("refused") for name, outcome in found.items()}
    if LANDLOCK < 6:  # signals outside the sandbox are scoped from Landlock ABI 6
        del refused["signal the app"]
    assert refused == dict.fromkeys(refused, True), found
    assert not planted.exists()
    assert key.stat().st_mode & 0o777 == 0o600
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing reached the listener


def test_an_answer_that_would_run_code_in_the_app_is_refused(tmp_path: Path) -> None:
    """A compromised reader writes, on its channel to the app, an answer whose decoding would
    run code: the app must not run it, and refuses the answer in one line."""
    marker = tmp_path / "ran-in-the-app"
    payload = f"open({str(marker)!r}, 'w').write('ran in the application')"
    source = (
        "import pickle, struct\n"
        "class Runs:\n"
        "    def __reduce__(self):\n"
        f"        return exec, ({payload!r},)\n"
        "answer = pickle.dumps(('ok', Runs()))\n"
        "frame = struct.pack('!i', len(answer)) + answer\n"
    )

    with pytest.raises(Unreadable) as refused:
        _run_in_reader(source + WRITE_ON_THE_CHANNEL)

    assert not marker.exists()
    assert str(refused.value) == REFUSED_ANSWER


WRITE_ON_THE_CHANNEL = """
import stat, struct
for fd in range(3, 256):
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            os.write(fd, frame)
    except OSError:
        pass
result = b'an ordinary answer after it'
"""


def test_an_answer_larger_than_the_reader_could_hold_is_refused_before_it_is_read() -> None:
    """A compromised reader announces a 2 GB answer (and could stream it without holding it):
    the app refuses it at once rather than filling its own memory with it."""
    started = time.monotonic()
    with pytest.raises(Unreadable) as refused:
        _run_in_reader(
            "import struct\nframe = struct.pack('!i', 0x7FFFFFFF)\n" + WRITE_ON_THE_CHANNEL,
            seconds=10,
        )

    assert str(refused.value) == REFUSED_ANSWER
    assert time.monotonic() - started < 10


def test_the_reader_reports_the_sandbox_it_runs_in() -> None:
    pieces = [
        *(["landlock"] if LANDLOCK else []),
        *(["netns", "ipcns"] if NAMESPACES else []),
        *(["seccomp"] if SECCOMP else []),
    ]
    reader = BoundedReader(MEMORY)
    try:
        assert reader.read("text", b"plain words", 60).text == "plain words"
        assert reader.sandbox is not None
        assert reader.sandbox.level == ("+".join(pieces) or "process-only")
        assert reader.sandbox.filesystem == bool(LANDLOCK)
        assert reader.sandbox.network == (NAMESPACES or (LANDLOCK >= 4 and SECCOMP))
    finally:
        reader.close()


PRCTL = {"x86_64": 157, "aarch64": 167}
PR_SET_SECCOMP = 22
LOAD_FORMATS = """
import json, sys
from rlm_desktop.documents import load_paths

if __name__ == "__main__":
    print(json.dumps({d.name: d.text for d in load_paths([sys.argv[1]]).documents}))
"""


def _as_on_a_system_without_sandboxes() -> None:
    """In the child, before it runs Python: a seccomp filter that answers as a kernel without
    Landlock (ENOSYS), without unprivileged user namespaces (EPERM) and without seccomp filters
    (EINVAL) would, as a container's default profile may; every process it starts inherits it."""
    machine = os.uname().machine
    jump, load = 0x15, 0x20
    lines = [
        *seccomp._header(machine),
        (jump, "no landlock", 0, SYS_LANDLOCK_CREATE_RULESET),
        (jump, "no namespaces", 0, seccomp.NUMBERS[machine]["unshare"]),
        (jump, 0, "allow", PRCTL[machine]),
        (load, 0, 0, seccomp._arg(0)),
        (jump, "no filters", "allow", PR_SET_SECCOMP),
        "no landlock",
        seccomp._refuse(errno.ENOSYS),
        "no namespaces",
        seccomp._refuse(errno.EPERM),
        "no filters",
        seccomp._refuse(errno.EINVAL),
        "allow",
        seccomp._ALLOW,
        "foreign",
        seccomp._refuse(errno.ENOSYS),
    ]
    if not seccomp._load(load_libc(), seccomp._assemble(lines)):
        raise OSError("the test's seccomp filter was refused")


@pytest.mark.skipif(not SECCOMP, reason="no seccomp rules for this architecture")
def test_where_the_system_gives_no_sandbox_documents_load_as_before_and_the_level_is_said(
    format_folder: Path, tmp_path: Path, isolated_home: Path
) -> None:
    script = tmp_path / "load_formats.py"  # a file: the reader process imports the main module
    script.write_text(LOAD_FORMATS, encoding="utf-8")

    done = run_python(
        str(script),
        str(format_folder),
        home=isolated_home,
        preexec_fn=_as_on_a_system_without_sandboxes,
    )

    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    read_by_the_reader = {
        f"formats/{name}": text
        for name, (kind, text) in EXPECTED.items()
        if kind in COMPRESSED_TYPES
    }
    assert {name: loaded.get(name) for name in read_by_the_reader} == read_by_the_reader
    assert done.stderr.splitlines() == [
        "documents are read in a process of their own without a full sandbox on this system "
        "(process-only): a parser taken over by a hostile file could read and write your files "
        "and reach the network"
    ]
