"""The read-only view of the file system a run's REPL workers get (Linux 5.12+, in a mount namespace).

Standard library only, loaded by path by confine.py inside the launcher. Landlock decides what
model code may read and write, but not what it may `chmod`, `chown`, `utime` or tag with extended
attributes: those need only a path, so without more model code could make the user's key
world-readable, `~/.ssh` world-writable or the sessions database unreadable. Seccomp cannot see
paths. So the launcher, in a mount namespace of its own, makes every mount read-only, then binds
the run's scratch folder back writable: the kernel then refuses any change outside it (EROFS),
whatever call makes it, by path or by descriptor. The user's own mounts are untouched: this is a
copy of the mount table that only the run's processes see.
"""

from __future__ import annotations

import ctypes
import os
import struct
from typing import Any

SYS_MOUNT_SETATTR = 442  # the same on every architecture
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18


def _setattr(libc: Any, path: str, set_flags: int, clear_flags: int, recursive: bool) -> None:
    attr = ctypes.create_string_buffer(struct.pack("=QQQQ", set_flags, clear_flags, 0, 0))
    done = libc.syscall(
        SYS_MOUNT_SETATTR,
        ctypes.c_int(AT_FDCWD),
        path.encode(),
        ctypes.c_uint(AT_RECURSIVE if recursive else 0),
        attr,
        ctypes.c_size_t(len(attr.raw)),
    )
    if done != 0:
        raise OSError(ctypes.get_errno(), f"mount_setattr failed for {path}")


def _mount(libc: Any, source: str | None, target: str, flags: int) -> None:
    encoded = source.encode() if source is not None else None
    if libc.mount(encoded, target.encode(), None, ctypes.c_ulong(flags), None) != 0:
        raise OSError(ctypes.get_errno(), f"mount failed for {target}")


def read_only_except(libc: Any, writable: str) -> None:
    """Make every mount of this (new) mount namespace read-only but `writable`, a folder.

    Needs CAP_SYS_ADMIN in the namespace's user namespace (the launcher has it until it drops its
    capabilities). Raises `ReadOnlyFailed` (nothing changed: the caller falls back on seccomp)
    or OSError (the view is read-only everywhere, scratch included: the caller must stop).
    """
    try:
        _mount(libc, None, "/", MS_REC | MS_PRIVATE)  # nothing here reaches the user's mounts
        _mount(libc, writable, writable, MS_BIND)
        # One atomic change: every mount read-only, or none (mounts the user has read-only stay
        # so, and are locked so in this namespace whatever happens).
        _setattr(libc, "/", MOUNT_ATTR_RDONLY, 0, recursive=True)
    except OSError as error:
        raise ReadOnlyFailed(error.errno, str(error)) from None
    _setattr(libc, writable, 0, MOUNT_ATTR_RDONLY, recursive=False)  # our own bind: not locked
    os.chdir(writable)  # the launcher's folder, now on the writable mount


class ReadOnlyFailed(OSError):
    """The read-only view could not be set up; the file system was left as it was."""
