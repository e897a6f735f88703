"""The read-only view of the file system a run's REPL workers get (Linux 5.12+, in a mount namespace).

Standard library only, loaded by path by confine.py inside the launcher. Landlock decides what
model code may read and write, but not what it may `chmod`, `chown`, `utime` or tag with extended
attributes: those need only a path, so without more model code could make the user's key
world-readable, `~/.ssh` world-writable or the sessions database unreadable. Seccomp cannot see
paths. So the launcher, in a mount namespace of its own, makes every mount read-only, then puts a
writable file system of its own at the run's scratch folder: the kernel then refuses any change
outside it (EROFS), whatever call makes it, by path or by descriptor. The user's own mounts are
untouched: this is a copy of the mount table that only the run's processes see.

That file system is a tmpfs of the run's scratch quota (and a bound on its files), which an
unprivileged user may mount in a user namespace of their own: model code's files live in memory
(charged to the run's memory bound where a cgroup holds it), a write past the quota fails with
"No space left on device" in the cell that made it, nothing of it ever reaches the disk, and all of
it goes when the run's namespace ends — whatever modes model code gave its folders. Where a tmpfs
cannot be mounted, the folder is bound back writable on the disk instead, and the app checks it
(scratch_quota.py).
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
MS_NOSUID = 0x2
MS_NODEV = 0x4
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


def _mount(
    libc: Any,
    source: str | None,
    target: str,
    flags: int,
    kind: str | None = None,
    options: str | None = None,
) -> None:
    encoded = source.encode() if source is not None else None
    fstype = kind.encode() if kind is not None else None
    data = options.encode() if options is not None else None
    if libc.mount(encoded, target.encode(), fstype, ctypes.c_ulong(flags), data) != 0:
        raise OSError(ctypes.get_errno(), f"mount failed for {target}")


def _scratch_in_memory(libc: Any, writable: str, size_bytes: int, files: int) -> bool:
    """Mount a tmpfs of `size_bytes` and at most `files` files and folders at `writable`; False
    (nothing mounted) where the kernel refuses it."""
    options = f"size={max(size_bytes, 4096)},nr_inodes={files},mode=0700"
    try:
        _mount(libc, "rlm-scratch", writable, MS_NOSUID | MS_NODEV, "tmpfs", options)
    except OSError:
        return False
    return True


def read_only_except(
    libc: Any, writable: str, size_bytes: int | None = None, files: int = 0
) -> bool:
    """Make every mount of this (new) mount namespace read-only but `writable`, a folder; with
    `size_bytes`, `writable` becomes a tmpfs of that size holding at most `files` files and
    folders. Returns True when it did (False: `writable` is the folder on its disk).

    Needs CAP_SYS_ADMIN in the namespace's user namespace (the launcher has it until it drops its
    capabilities). Raises `ReadOnlyFailed` (nothing changed: the caller falls back on seccomp)
    or OSError (the view is read-only everywhere, scratch included: the caller must stop).
    """
    in_memory = False
    try:
        _mount(libc, None, "/", MS_REC | MS_PRIVATE)  # nothing here reaches the user's mounts
        if size_bytes is not None:
            in_memory = _scratch_in_memory(libc, writable, size_bytes, files)
        if not in_memory:
            _mount(libc, writable, writable, MS_BIND)
        # One atomic change: every mount read-only, or none (mounts the user has read-only stay
        # so, and are locked so in this namespace whatever happens).
        _setattr(libc, "/", MOUNT_ATTR_RDONLY, 0, recursive=True)
    except OSError as error:
        raise ReadOnlyFailed(error.errno, str(error)) from None
    _setattr(libc, writable, 0, MOUNT_ATTR_RDONLY, recursive=False)  # our own mount: not locked
    os.chdir(writable)  # the launcher's folder, now on the writable mount
    return in_memory


class ReadOnlyFailed(OSError):
    """The read-only view could not be set up; the file system was left as it was."""
