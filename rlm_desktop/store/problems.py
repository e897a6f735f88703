"""What went wrong with the session database, in one line that says what to do about it."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from rlm_desktop.store.room import full_disk

_FULL = "the disk is full; free some space"
_READ_ONLY = (
    "it cannot be written (a read-only file, folder or disk); make it writable, "
    "or point RLM_DESKTOP_HOME at a folder you can write"
)
_DAMAGED = (
    "it is not a readable session database (damaged, or another kind of file); "
    "move it aside (a new one is made in its place) or restore a backup"
)
_BUSY = "another process holds it locked; close the other rlm-desktop and try again"
_BY_SQLITE_CODE = {  # primary result codes of https://sqlite.org/rescode.html
    3: _READ_ONLY,  # SQLITE_PERM
    5: _BUSY,  # SQLITE_BUSY
    6: _BUSY,  # SQLITE_LOCKED
    8: _READ_ONLY,  # SQLITE_READONLY
    11: _DAMAGED,  # SQLITE_CORRUPT
    13: _FULL,  # SQLITE_FULL
    14: "it cannot be opened; check that its folder exists and can be written",  # CANTOPEN
    26: _DAMAGED,  # SQLITE_NOTADB
}
_MAYBE_FULL = {10, 13, 14}
"""SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN: what SQLite says on a full disk (creating the
shared-memory file there reads "disk I/O error"); said as a full disk when the disk is."""
_BY_ERRNO = {
    errno.ENOSPC: _FULL,
    errno.EDQUOT: "your disk quota is used up; free some space",
    errno.EROFS: _READ_ONLY,
    errno.EACCES: _READ_ONLY,
    errno.EPERM: _READ_ONLY,
}


def database_problem(error: BaseException, path: Path) -> str:
    """`error`, met reading or writing the database at `path`, as one line with its fix."""
    if isinstance(error, sqlite3.Error):
        code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF
        what = _BY_SQLITE_CODE.get(code) or str(error)
        may_be_full = code in _MAYBE_FULL
    elif isinstance(error, OSError):
        what = _BY_ERRNO.get(error.errno or 0) or error.strerror or str(error)
        may_be_full = error.errno == errno.ENOSPC
    else:
        what = f"{type(error).__name__}: {error}"
        may_be_full = False
    full = full_disk(path.parent) if may_be_full else None
    return f"session database {path}: {full or what}"
