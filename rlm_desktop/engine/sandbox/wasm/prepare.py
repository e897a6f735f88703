"""Getting the wasm sandbox ready before a run needs it: its guest compiled for this machine.

The host compiles the guest itself when a run finds no compiled form (launcher.py says so), but
that adds seconds to the first run; the window and the command line call `prepare` first, on a
thread of their own, and say what is happening meanwhile.
"""

from __future__ import annotations

import time
from pathlib import Path

from rlm_desktop.engine.sandbox.wasm.compiled import (
    GUEST,
    cache_name,
    digest,
    load_component,
    make_engine,
    runtime_version,
)


def is_prepared(cache_dir: Path) -> bool:
    """True when the compiled guest for this guest, runtime and machine is in `cache_dir` (its
    digest is checked when it is loaded)."""
    return GUEST.is_file() and (cache_dir / cache_name(digest(GUEST), runtime_version())).is_file()


def prepare(cache_dir: Path) -> float:
    """Compile the guest into `cache_dir` unless it is there already; the seconds it took
    (0 when nothing was compiled). Raises `GuestMissing` when there is no guest to compile."""
    started = time.monotonic()
    compiled: list[bool] = []
    load_component(make_engine(), cache_dir, lambda: compiled.append(True))
    return time.monotonic() - started if compiled else 0.0
