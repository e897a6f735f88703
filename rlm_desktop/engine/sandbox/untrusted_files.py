"""Files in folders model code could have written, handled in the application's own
(unconfined) process.

A worker's folder is model code's to write, and what the app keeps beside it may be reached by a
link planted there: a file the app reads may be a symbolic link to the user's SSH key, a hard link
to the sessions database, a FIFO that blocks a reader forever, or a device. Outside the sandbox
the app can read all of those, so it never follows a link here and takes only a regular file with
one name, opened once: the checks and the read use the same descriptor, so nothing can be swapped
in between. New files are created, never opened through a name that exists; folders are removed
without following links, their modes given back to their owner where model code locked them.

Where the system cannot open a name relative to a folder's descriptor without following a link
(Windows has no `dir_fd`, `O_NOFOLLOW`, `O_DIRECTORY` or `fchmod`; `RLM_DESKTOP_PORTABLE` forces
this path elsewhere), the same guarantees are kept by names: a symbolic link, a junction or any
other reparse point is never read, listed or followed (`os.lstat`, `FILE_ATTRIBUTE_REPARSE_POINT`,
which is what `os.path.isjunction` reads), the file opened is checked to be the one looked at
(device and file number) as well as regular, single-named and within the limit, and a tree is
removed by moving its folders up to its top one by one, so that no name gets longer than the
top's own and no recursion is needed however deep it goes. What names cannot close is a race
with model code still running: a folder on the way swapped for a link between the check and the
use (and swapped back before the check after it) is read or listed through that link. The app
reads and removes a worker's files once the worker has stopped; a WebAssembly guest can make
symbolic links (relative ones, which may lead out of its folder) but no junction, and on Windows
only with Developer Mode or the privilege to make links.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path, PurePath, PureWindowsPath
from typing import BinaryIO

from rlm_desktop import portability

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC
_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY
_BY_NAME_READ_FLAGS = os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY
"""What the portable path opens a file with: no `O_NOFOLLOW` (Windows has none), so the check
that the file opened is the one looked at is what keeps a link out, here as there."""
_OWNER_ONLY = stat.S_IRWXU
"""A folder's mode given back to its owner (on Windows: the read-only attribute cleared)."""


class UntrustedFile(OSError):
    """A file from a sandboxed folder that is not a plain regular file, or is too large."""


def by_descriptor() -> bool:
    """True where names can be opened in a folder's descriptor without following a link (POSIX
    `dir_fd`, `O_NOFOLLOW`, `O_DIRECTORY`, `fchmod`); False on Windows and when forced."""
    return (
        os.open in os.supports_dir_fd
        and os.scandir in os.supports_fd
        and all(portability.has(os, name) for name in ("O_NOFOLLOW", "O_DIRECTORY", "fchmod"))
    )


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


def _is_link(info: os.stat_result) -> bool:
    """A symbolic link, or on Windows a junction or other reparse point."""
    reparse = getattr(info, "st_file_attributes", 0) & stat.FILE_ATTRIBUTE_REPARSE_POINT
    return stat.S_ISLNK(info.st_mode) or bool(reparse)


def _refuse_unless_regular(name: str, info: os.stat_result, limit_bytes: int) -> None:
    if _is_link(info) and not stat.S_ISLNK(info.st_mode):
        raise UntrustedFile(f"{name} is a junction or other link (a reparse point)")
    if not stat.S_ISREG(info.st_mode):
        raise UntrustedFile(f"{name} is {_describe(info.st_mode)}")
    if info.st_nlink == 0:
        raise UntrustedFile(f"{name} was removed while it was opened")
    if info.st_nlink != 1:
        raise UntrustedFile(f"{name} has {info.st_nlink} names (a hard link)")
    if info.st_size > limit_bytes:
        raise UntrustedFile(f"{name} is larger than {limit_bytes:,} bytes")


def open_regular(path: Path, limit_bytes: int) -> int:
    """A read-only descriptor of `path`, which must be a regular file with a single link, of at
    most `limit_bytes`, in a folder that is not a link itself. Raises `UntrustedFile` (or the
    `OSError` of a missing file) otherwise."""
    if not by_descriptor():
        return _open_regular_by_name(path, limit_bytes)
    folder = os.open(path.parent, _DIRECTORY_FLAGS)
    try:
        try:
            fd = os.open(path.name, _READ_FLAGS, dir_fd=folder)
        except OSError as error:
            if error.errno == errno.ELOOP:  # the last component is a symbolic link
                raise UntrustedFile(f"{path.name} is a symbolic link") from None
            raise
    finally:
        os.close(folder)
    try:
        _refuse_unless_regular(path.name, os.fstat(fd), limit_bytes)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_regular_by_name(path: Path, limit_bytes: int) -> int:
    """`open_regular` where only names can be opened: the folder and the file looked at without
    following a link, then the file opened and checked to be that same file."""
    folder = _real_folder(str(path.parent))
    seen = os.lstat(path)
    _refuse_unless_regular(path.name, seen, limit_bytes)
    fd = os.open(path, _BY_NAME_READ_FLAGS)
    try:
        opened = os.fstat(fd)
        if not _same_file(opened, seen) or not _same_file(_real_folder(str(path.parent)), folder):
            raise UntrustedFile(f"{path.name} was replaced while it was opened")
        _refuse_unless_regular(path.name, opened, limit_bytes)
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _same_file(one: os.stat_result, other: os.stat_result) -> bool:
    return (one.st_dev, one.st_ino) == (other.st_dev, other.st_ino)


def _real_folder(name: str) -> os.stat_result:
    """What `os.lstat(name)` says of a folder that is not a link; `UntrustedFile` for a link,
    `NotADirectoryError` for anything else."""
    info = os.lstat(name)
    if _is_link(info):
        raise UntrustedFile(f"{os.path.basename(name)} is a link, not a folder")
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", name)
    return info


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
    """`path` created anew for writing (mode 0600), never through a link planted at its name
    (`O_EXCL` refuses any name that exists, a link included)."""
    return os.fdopen(os.open(path, _CREATE_FLAGS, 0o600), "wb")


def remove_tree(root: Path) -> None:
    """Remove the folder `root` and all it holds, however deep, never through a link.

    Model code may have made a tree thousands of folders deep: `shutil.rmtree` recurses (a
    `RecursionError`) and a path that deep is too long to name. This walks down one descriptor at
    a time and comes back up through `..`, keeping only the names on its way (where there are no
    such descriptors, it moves each folder up to `root` instead: `_remove_tree_by_name`).

    Model code may also have locked its own folders (`chmod 000` a folder, `chmod 500` its
    parent) so that an ordinary user's removal fails and its files fill the disk for good: a
    folder that cannot be opened or emptied is given back to its owner (mode 0700) first, never
    through a link. Errors other than a file already gone are left to the caller; nothing else
    is touched.
    """
    if not by_descriptor():
        _remove_tree_by_name(extended_length(root))
        return
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


def empty_folder(folder: Path) -> list[str]:
    """Remove what `folder` holds, never through a link, keeping the folder itself; returns one
    line for each entry that could not be removed. A link (a junction too) is removed as a link,
    a folder as a tree (`remove_tree`), a file given back to its owner when its mode (on
    Windows: its read-only attribute) keeps it."""
    try:
        entries = _entries(str(folder))
    except OSError:
        return []
    failed = []
    for name, info in entries:
        path = os.path.join(folder, name)
        try:
            if stat.S_ISDIR(info.st_mode) and not _is_link(info):
                remove_tree(Path(path))
            else:
                _owned_by_name(_unlink_link_or_file, path, owners=(str(folder), path))
        except OSError as error:
            failed.append(f"{name} not removed: {error}")
    return failed


def extended_length(path: PurePath) -> str:
    """The name the system should be given for `path`: on Windows an absolute path with the
    `\\\\?\\` prefix, which lifts the 260-character limit (and Windows' rewriting of names);
    elsewhere the path as it is."""
    name = str(path)
    if (
        not isinstance(path, PureWindowsPath)
        or not path.is_absolute()
        or name.startswith("\\\\?\\")
    ):
        return name
    if name.startswith("\\\\"):
        return "\\\\?\\UNC\\" + name[2:]
    return "\\\\?\\" + name


def _remove_tree_by_name(top: str) -> None:
    """`remove_tree` by names: each folder in the tree is emptied of its files and links and its
    folders are moved up into `top` (under names of their own), so that no name grows past
    `top/<folder>/<entry>` however deep the tree, and no folder is visited twice."""
    try:
        _real_folder(top)
    except FileNotFoundError:
        return
    pending = _emptied_by_name(top, into=None)
    while pending:
        folder = os.path.join(top, pending.pop())
        pending += _emptied_by_name(folder, into=top)
        _owned_by_name(os.rmdir, folder, owners=(top, folder))
    _owned_by_name(os.rmdir, top, owners=(top,))


def _emptied_by_name(folder: str, into: str | None) -> list[str]:
    """Unlink the files and links of `folder` and move its folders into `into` (leave them where
    they are when None); the names of those folders in `into` (or `folder`)."""
    try:
        entries = _entries(folder)
    except PermissionError:
        _give_back_by_name(folder)
        entries = _entries(folder)
    folders = []
    for name, info in entries:
        path = os.path.join(folder, name)
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISDIR(info.st_mode) or _is_link(info):
                _owned_by_name(_unlink_link_or_file, path, owners=(folder, path))
            elif into is None:
                folders.append(name)
            else:
                moved = secrets.token_hex(8)
                owners = (folder, into, path)
                _owned_by_name(os.rename, path, os.path.join(into, moved), owners=owners)
                folders.append(moved)
    return folders


def _entries(folder: str) -> list[tuple[str, os.stat_result]]:
    """The names in `folder` with what they are, read without following a link (a junction's
    `is_dir()` is true on Windows: only its attributes tell)."""
    _real_folder(folder)
    with os.scandir(folder) as entries:
        return [(entry.name, entry.stat(follow_symlinks=False)) for entry in entries]


def _unlink_link_or_file(path: str) -> None:
    """Unlink `path` itself: a file, or a link of any kind (on Windows a link to a folder, a
    junction, is removed as a folder is, which removes the link, not where it leads)."""
    try:
        os.unlink(path)
    except (IsADirectoryError, PermissionError):
        info = os.lstat(path)
        if not (_is_link(info) and stat.S_ISDIR(info.st_mode)):
            raise
        os.rmdir(path)


def _owned_by_name(change: Callable[..., None], *names: str, owners: tuple[str, ...]) -> None:
    """`change(*names)`, giving the `owners` (folders it writes, and what it changes) back to
    their owner one by one while their modes (on Windows: read-only attributes) forbid it."""
    for owner in (*owners, None):
        try:
            change(*names)
            return
        except PermissionError:
            if owner is None:
                raise
            _give_back_by_name(owner)


def _give_back_by_name(path: str) -> None:
    """Make `path` its owner's to change: a folder mode 0700, a file with one name writable by
    its owner (on Windows: the read-only attribute cleared); a link, or a file with other names
    (the user's own, hard-linked), is left alone."""
    info = os.lstat(path)
    if _is_link(info):
        return
    if stat.S_ISDIR(info.st_mode):
        os.chmod(path, _OWNER_ONLY)
    elif stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
        os.chmod(path, stat.S_IMODE(info.st_mode) | stat.S_IWRITE)
