"""A run's scratch folder held to its quota where it lives on the disk.

Where the kernel sandbox gives the run a mount namespace, scratch is a tmpfs of the quota's size
(mounts.py) and nothing here is needed. Elsewhere (macOS, a Linux whose user namespaces are
closed, `process-only`), model code writes the real disk, and an ordinary user's model code could
fill it: then the session's own record cannot be written and every later run is refused. So the
app checks the folder while the run goes on:

- each worker is started with a per-file size limit (`RLIMIT_FSIZE`) of the run's allowance, so
  no single write can take more;
- every `FREE_CHECK_S` the disk's free space is read (a statfs: microseconds), and every
  `FILES_CHECK_S` the folder's files are counted and sized (the blocks they take, links never
  followed, at most `SCRATCH_FILES` entries read);
- past the allowance, past the number of files, or once the disk has lost more than the allowance
  (and a margin for the app's own writes) since the run began (model code may hide files in a
  folder it locked), the run's workers are stopped with the reason, which the cell that was
  running shows, and the folder is emptied; the next cell starts a fresh worker.

The allowance is the quota, less what the data folder keeps for the session's record
(`RECORD_ROOM`): on a nearly full disk, model code may write nothing, and says why. A check is
not a wall: between two reads of the free space a fast writer takes what the disk writes in
`FREE_CHECK_S` (60 MB at 3 GB/s), well inside the room kept for the record.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import shutil
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rlm_desktop.engine.sandbox.level import MIB, SCRATCH_FILES
from rlm_desktop.engine.sandbox.untrusted_files import empty_folder

log = logging.getLogger(__name__)

FREE_CHECK_S = 0.02
FILES_CHECK_S = 0.25
RECORD_ROOM = 256 * MIB
"""What the data folder's disk keeps free for the session's record, whatever model code writes."""
APP_MARGIN = 64 * MIB
"""What the app itself may write on that disk while the run goes on (its events), besides what
model code is allowed."""


@dataclass(frozen=True)
class Usage:
    """What the files under a folder take: bytes on the disk and entries (files and folders)."""

    bytes: int
    entries: int


def usage(folder: Path, most_entries: int) -> Usage:
    """The disk space the regular files under `folder` take (their blocks where the system tells
    them, else their sizes), never through a link; counting stops past `most_entries`. A folder
    that cannot be read counts as empty (the disk's free space still shows what it holds)."""
    total = entries = 0
    pending = [str(folder)]
    while pending and entries <= most_entries:
        try:
            with os.scandir(pending.pop()) as found:
                for entry in found:
                    entries += 1
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(info.st_mode):
                        pending.append(entry.path)
                    elif stat.S_ISREG(info.st_mode):
                        blocks = getattr(info, "st_blocks", None)
                        total += blocks * 512 if blocks is not None else info.st_size
        except OSError:
            continue
    return Usage(total, entries)


def free_bytes(folder: Path) -> int | None:
    """What the disk holding `folder` has free (None when it cannot be told)."""
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def allowance(quota_bytes: int, free: int | None) -> int:
    """What model code may write on a disk with `free` bytes: the quota, less the room the
    session's record keeps (all of the quota when the free space cannot be told)."""
    if free is None:
        return quota_bytes
    return max(0, min(quota_bytes, free - RECORD_ROOM))


def megabytes(size: int) -> str:
    """`size` bytes in whole MB (MiB), as the settings give the quota."""
    return f"{size / MIB:,.0f} MB"


class ScratchWatch:
    """Checks a run's scratch `folder` on the disk against `quota_bytes`, in a thread of its own:
    the disk's free space every `FREE_CHECK_S`, the folder's files every `FILES_CHECK_S`. Past
    the allowance, `stop(reason)` stops the run's workers (on the event loop it was started
    from), then the folder is emptied holding `hold` (the launcher's lock, so that no new
    worker starts meanwhile)."""

    def __init__(
        self, folder: Path, quota_bytes: int, stop: Callable[[str], None], hold: asyncio.Lock
    ) -> None:
        self.folder = folder
        self.quota_bytes = quota_bytes
        self.started_free = free_bytes(folder)
        self.allowance = allowance(quota_bytes, self.started_free)
        self._stop = stop
        self._hold = hold
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Begin checking; the workers are stopped on the running loop."""
        loop = asyncio.get_running_loop()
        self._thread = threading.Thread(
            target=self._watch, args=(loop,), name="scratch-quota", daemon=True
        )
        self._thread.start()

    async def close(self) -> None:
        """Stop checking."""
        self._closed.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            await asyncio.to_thread(thread.join)

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        every = max(1, round(FILES_CHECK_S / FREE_CHECK_S))
        checks = 0
        while not self._closed.wait(FREE_CHECK_S):
            checks += 1
            walk = checks % every == 0
            problem = self.disk_problem() or (self.files_problem() if walk else None)
            if problem is None:
                continue
            try:
                asyncio.run_coroutine_threadsafe(self._enforce(problem), loop).result()
            except (RuntimeError, concurrent.futures.CancelledError):
                return  # the loop is closing: the run is over
            except Exception:  # never let a failed clean-up end the checks
                log.warning("scratch %s: not emptied", self.folder, exc_info=True)

    def disk_problem(self) -> str | None:
        """Why the disk has lost too much since the run began; None if it has not."""
        free = free_bytes(self.folder)
        if free is None or self.started_free is None:
            return None
        lost = self.started_free - free
        if lost <= self.allowance + APP_MARGIN:
            return None
        return (
            f"the disk lost {megabytes(lost)} while model code ran; its files may take "
            f"{self.room()}"
        )

    def files_problem(self) -> str | None:
        """Why the folder's files are over the allowance now; None if they are not."""
        found = usage(self.folder, SCRATCH_FILES)
        if found.entries > SCRATCH_FILES:
            return (
                f"model code made more than {SCRATCH_FILES:,} files and folders in the run's "
                "scratch folder"
            )
        if found.bytes > self.allowance:
            return f"model code's files took {megabytes(found.bytes)}; they may take {self.room()}"
        return None

    def room(self) -> str:
        """How much model code's files may take, and why no more."""
        if self.allowance >= self.quota_bytes:
            return f"at most {megabytes(self.quota_bytes)} (setting scratch_quota_mb)"
        return (
            f"at most {megabytes(self.allowance)}, all the disk could spare (the app keeps "
            f"{megabytes(RECORD_ROOM)} free for the session's record)"
        )

    async def _enforce(self, problem: str) -> None:
        reason = f"the REPL worker was stopped: {problem}; its files were removed"
        log.warning("scratch %s: %s", self.folder, problem)
        self._stop(reason)
        async with self._hold:
            for line in await asyncio.to_thread(empty_folder, self.folder):
                log.info("scratch %s: %s", self.folder, line)
