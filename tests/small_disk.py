"""A real small disk for tests of what the app does when the disk is full: a tmpfs mounted on a
folder of the test's own (root, or CAP_SYS_ADMIN, is needed: the test is skipped, saying why,
where mounting is not permitted), filled to leave a chosen number of bytes free."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHUNK = 1024 * 1024


@contextmanager
def small_disk(folder: Path, size_bytes: int) -> Iterator[Path]:
    """`folder` (created if missing) as the mount point of a `size_bytes` tmpfs while in use."""
    if not sys.platform.startswith("linux") or shutil.which("mount") is None:
        pytest.skip("a tmpfs needs Linux and mount(8)")
    folder.mkdir(parents=True, exist_ok=True)
    options = f"size={size_bytes},mode=0755"
    tried = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if tried.returncode:
        reason = tried.stderr.strip() or f"exit {tried.returncode}"
        pytest.skip(f"mounting a tmpfs is not permitted here: {reason}")
    try:
        yield folder
    finally:
        done = subprocess.run(["umount", str(folder)], capture_output=True, check=False)
        if done.returncode:  # something still holds a file there: detach it now, free it later
            subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def free_bytes(folder: Path) -> int:
    """What an ordinary write may still take on `folder`'s disk."""
    return shutil.disk_usage(folder).free


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill `folder`'s disk with a file until the disk refuses, then give `leave` bytes back."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as file:
        try:
            while True:
                file.write(bytes(CHUNK if free_bytes(folder) > CHUNK else 4096))
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
    if leave:
        os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler
