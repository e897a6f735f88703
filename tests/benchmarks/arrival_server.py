"""The scripted server in a process of its own that says when each chat request arrived.

`python -m tests.benchmarks.arrival_server` prints its base URL, then one line per chat request:
its arrival as a `time.monotonic()` reading (one clock for every process of the machine), so a
benchmark can time a command it spawned from the spawn to its first request. Every request is
answered with one `repl` block that submits an answer, so a run ends after one turn: `found`, or
with `--scan NEEDLE`, the name of the document holding NEEDLE (the code reads every document).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.scripted_server import ScriptedServer

ANSWER = "found"
REPLY = f"```repl\nFINAL({ANSWER!r})\n```"
SCAN = (
    "```repl\n"
    "hits = [i for i, text in enumerate(context) if {needle!r} in text]\n"
    "FINAL(context_meta[hits[0]]['name'] if hits else 'nowhere')\n"
    "```"
)


@contextmanager
def arrival_server(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """This server in a process of its own (`args`: `--scan NEEDLE`, or none): its base URL,
    and the process whose stdout says when requests came. It stops when its stdin closes."""
    from tests.cli import ROOT

    server = subprocess.Popen(
        [sys.executable, "-m", "tests.benchmarks.arrival_server", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    try:
        yield server.stdout.readline().strip(), server
    finally:
        server.communicate(timeout=30)


def main() -> None:
    """Serve until stdin closes."""
    reply = SCAN.format(needle=sys.argv[2]) if sys.argv[1:2] == ["--scan"] else REPLY
    server = ScriptedServer()
    lock = threading.Lock()

    def respond(request: dict[str, Any]) -> str:
        arrived = time.monotonic()
        with lock:
            print(f"{arrived:.6f}", flush=True)
        return reply

    server.respond_with(respond)
    server.start()
    print(server.base_url, flush=True)
    sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    main()
