"""Whether the data folder's disk has room to record a run, asked before its first request.

A run that cannot be recorded should not be sent: on a full disk the requests were sent and paid
for, and then the session was lost. `Store.record` (the one way the command line and the window
start recording a run) asks `room_problem` first, and refuses with its line.

How much room a run needs to start being recorded, measured on this store (2026-12-01):

- the documents, twice: the opening transaction writes their text to the write-ahead log, and the
  checkpoint copies it into the database while the log still holds it (a 3 MB document peaked at
  6.3 MB on disk, and settled at 3.0 MB);
- plus `MIN_FREE_BYTES`, 4 MiB: SQLite lets the log grow to 1,000 pages (4 MiB at the 4 KiB page
  size) before it copies them back, so any run that records a few turns of output (a cell's output
  is kept up to 1 MB) needs that much on top of what the database itself grows by. A one-turn run
  peaked at 0.2 MB; a new database's migrations (~0.7 MB) run when it opens, before this check.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rlm_desktop.engine.sandbox.scratch_quota import free_bytes

MIN_FREE_BYTES = 4 * 1024 * 1024
"""The room a run needs besides its documents (see the module's docstring)."""
FIX = "free some space there, or point RLM_DESKTOP_HOME at a folder on another disk"


def needed_bytes(chars: Iterable[int]) -> int:
    """The room recording a run over documents of these lengths (`chars`) needs at its start.

    Characters count as bytes: exact for ASCII text, an underestimate of at most 4x for other
    scripts, which `MIN_FREE_BYTES` and the doubling cover for all but very large documents.
    """
    return MIN_FREE_BYTES + 2 * sum(chars)


def room_problem(folder: Path, needed: int) -> str | None:
    """One line saying the disk is full and how to fix it, when `folder`'s disk has less than
    `needed` bytes free; None when it has room (or cannot tell)."""
    free = free_bytes(folder)
    if free is None or free >= needed:
        return None
    return (
        f"the disk is full: {folder} has {megabytes(free)} free, and a run needs "
        f"{megabytes(needed)} to record its session; {FIX}"
    )


def full_disk(folder: Path) -> str | None:
    """One line saying the disk is full, when `folder`'s disk has less than `MIN_FREE_BYTES`
    free (to tell a full disk behind an error SQLite words as "disk I/O error"); else None."""
    free = free_bytes(folder)
    if free is None or free >= MIN_FREE_BYTES:
        return None
    return f"the disk is full: {folder} has {megabytes(free)} free; {FIX}"


def megabytes(size: int) -> str:
    """`size` bytes in MB, e.g. "0.1 MB" (0 B as "0 MB")."""
    return "0 MB" if size <= 0 else f"{max(size / 1e6, 0.1):.1f} MB"
