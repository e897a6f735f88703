"""Files in folders model code could have written, handled in the application's own
(unconfined) process.

A worker's folder is model code's to write, and what the app keeps beside it may be reached by a
link planted there: a file the app reads may be a symbolic link to the user's SSH key, a hard link
to the sessions database, a FIFO that blocks a reader forever, or a device. Outside the sandbox
the app can read all of those, so it never follows a link here and takes only a regular file with
one name, opened once: the checks and the read use the same descriptor, so nothing can be swapped
in between. New files are created, never opened through a name that exists; folders are removed
without following links, their modes given back to their owner where model code locked them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class UntrustedFile(OSError):
    """A file from a sandboxed folder that is not a plain regular file, or is too large."""


def _describe(mode: int) -> str:
    kinds = (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def open_regular(path: Path, limit_bytes: int) -> int:
    """A read-only descriptor of `path`, which must be a regular file with a single link, of at
    most `limit_bytes`, in a folder that is not a link itself. Raises `UntrustedFile` (or the
    `OSError` of a missing file) otherwise."""
    folder = os.open(path.parent, _DIRECTORY_FLAGS)
    try:
        try:
            fd = os.open(path.name, _READ_FLAGS, dir_fd=folder)
        except OSError as error:
            if error.errno == 40:  # ELOOP: the last component is a symbolic link
                raise UntrustedFile(f"{path.name} is a symbolic link") from None
            raise
    finally:
        os.close(folder)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedFile(f"{path.name} is {_describe(info.st_mode)}")
        if info.st_nlink != 1:
            raise UntrustedFile(f"{path.name} has {info.st_nlink} names (a hard link)")
        if info.st_size > limit_bytes:
            raise UntrustedFile(f"{path.name} is larger than {limit_bytes:,} bytes")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path, limit_bytes: int) -> bytes:
    """The bytes of `path` (see `open_regular`), never more than `limit_bytes` even if the file
    grows while it is read."""
    fd = open_regular(path, limit_bytes)
    with os.fdopen(fd, "rb") as file:
        data = file.read(limit_bytes + 1)
    if len(data) > limit_bytes:
        raise UntrustedFile(f"{path.name} grew past {limit_bytes:,} bytes while it was read")
    return data


def open_new(path: Path) -> BinaryIO:
    """`path` created anew for writing (mode 0600), never through a link planted at its name."""
    return os.fdopen(os.open(path, _CREATE_FLAGS, 0o600), "wb")


def remove_tree(root: Path) -> None:
    """Remove the folder `root` and all it holds, however deep, never through a link.

    Model code may have made a tree thousands of folders deep: `shutil.rmtree` recurses (a
    `RecursionError`) and a path that deep is too long to name. This walks down one descriptor at
    a time and comes back up through `..`, keeping only the names on its way.

    Model code may also have locked its own folders (`chmod 000` a folder, `chmod 500` its
    parent) so that an ordinary user's removal fails and its files fill the disk for good: a
    folder that cannot be opened or emptied is given back to its owner (mode 0700) first, never
    through a link. Errors other than a file already gone are left to the caller; nothing else
    is touched.
    """
    try:
        fd = _open_folder(str(root), None)
    except FileNotFoundError:
        return
    names: list[str] = []
    try:
        while True:
            child = _first_emptied(fd)
            if child is not None:
                deeper = _open_folder(child, fd)
                os.close(fd)
                fd = deeper
                names.append(child)
                continue
            if not names:
                break
            parent = os.open("..", _DIRECTORY_FLAGS & ~os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = parent
            _owned(os.rmdir, names.pop(), fd)
    finally:
        os.close(fd)
    os.rmdir(root)


def _open_folder(name: str, dir_fd: int | None) -> int:
    """A descriptor of the folder `name` (in `dir_fd`), its mode given back to its owner when
    it shut them out; never through a link."""
    try:
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=dir_fd)
    except PermissionError:
        _give_back(name, dir_fd)
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=dir_fd)


def _give_back(name: str, dir_fd: int | None) -> None:
    """Make the folder `name` (in `dir_fd`) its owner's again: mode 0700, never through a link
    (where the system cannot change a mode without following one, the name is checked to be a
    folder first: what is left then is model code racing its own clean-up, which only ever
    leaves one of the user's folders at 0700)."""
    try:
        os.chmod(name, 0o700, dir_fd=dir_fd, follow_symlinks=False)
        return
    except (NotImplementedError, OSError) as error:
        if isinstance(error, OSError) and error.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
    if stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
        os.chmod(name, 0o700, dir_fd=dir_fd)


def _owned(remove: Callable[..., None], name: str, fd: int) -> None:
    """`remove(name, dir_fd=fd)`, first giving the folder `fd` back to its owner when its mode
    keeps them from changing it."""
    try:
        remove(name, dir_fd=fd)
    except PermissionError:
        os.fchmod(fd, 0o700)
        remove(name, dir_fd=fd)


def _first_emptied(fd: int) -> str | None:
    """Unlink the files and links of the folder `fd`; the name of a folder in it, if any."""
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                return entry.name
            with contextlib.suppress(FileNotFoundError):
                _owned(os.unlink, entry.name, fd)
    return None
