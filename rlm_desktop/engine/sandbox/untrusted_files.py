"""Reading files that model code could have made, in the application's own (unconfined) process.

A worker's folder is model code's to write: a file the app later takes from it (the saved REPL
state) may be a symbolic link to the user's SSH key, a hard link to the sessions database, a FIFO
that blocks a reader forever, or a device. Outside the sandbox the app can read all of those, so
it never follows a link here and takes only a regular file with one name, opened once: the checks
and the read use the same descriptor, so nothing can be swapped in between.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20


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


def copy_regular(source: Path, target: Path, limit_bytes: int) -> int:
    """Copy the regular file `source` (see `open_regular`) to `target`; returns the bytes copied.

    The copy is written to a new file beside `target` and renamed over it, so a link planted at
    either name is replaced, never followed."""
    fd = open_regular(source, limit_bytes)
    copied = 0
    with os.fdopen(fd, "rb") as reader:
        part = target.with_name(target.name + ".part")
        with contextlib.suppress(FileNotFoundError):
            part.unlink()
        with os.fdopen(os.open(part, _CREATE_FLAGS, 0o600), "wb") as writer:
            while chunk := reader.read(min(_CHUNK, limit_bytes + 1 - copied)):
                copied += len(chunk)
                if copied > limit_bytes:
                    break
                writer.write(chunk)
        if copied > limit_bytes:
            part.unlink()
            raise UntrustedFile(f"{source.name} grew past {limit_bytes:,} bytes while it was read")
    os.replace(part, target)
    return copied


def remove_tree(root: Path) -> None:
    """Remove the folder `root` and all it holds, however deep, never through a link.

    Model code may have made a tree thousands of folders deep: `shutil.rmtree` recurses (a
    `RecursionError`) and a path that deep is too long to name. This walks down one descriptor at
    a time and comes back up through `..`, keeping only the names on its way. Errors other than a
    file already gone are left to the caller; nothing else is touched.
    """
    try:
        fd = os.open(root, _DIRECTORY_FLAGS)
    except FileNotFoundError:
        return
    names: list[str] = []
    try:
        while True:
            child = _first_emptied(fd)
            if child is not None:
                deeper = os.open(child, _DIRECTORY_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = deeper
                names.append(child)
                continue
            if not names:
                break
            parent = os.open("..", _DIRECTORY_FLAGS & ~os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = parent
            os.rmdir(names.pop(), dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(root)


def _first_emptied(fd: int) -> str | None:
    """Unlink the files and links of the folder `fd`; the name of a folder in it, if any."""
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                return entry.name
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.name, dir_fd=fd)
    return None
