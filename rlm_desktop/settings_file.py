"""The settings file: its plain values (`settings_ini`), read again when it changes, written whole.

It is written through a temporary file renamed over it (a link at its place is replaced, not
followed), flushed to disk first. A file that is not a regular file (a FIFO would block the read)
or is larger than `MAX_BYTES` is ignored with a warning, as are values that are not plain
(`settings_ini` names them), once for each state of the file: there is one `SettingsFile` per path
in a process, as QSettings shares one per file.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
import threading
from collections.abc import Mapping
from contextlib import suppress
from typing import ClassVar

from rlm_desktop.settings_ini import Plain, Value, parse, render

log = logging.getLogger(__name__)

MAX_BYTES = 1 << 20
"""A larger settings file is not ours: it is ignored rather than read."""

_Stamp = tuple[int, int, int, int, int] | None


def _stamp(st: os.stat_result) -> _Stamp:
    """What tells one state of a file from another: a rename, a write or a change of size."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class SettingsFile:
    """One settings file: its plain values, read again when the file changes, written whole."""

    _by_path: ClassVar[dict[str, SettingsFile]] = {}
    _paths_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def at(cls, path: str | os.PathLike[str]) -> SettingsFile:
        """The one `SettingsFile` of `path` in this process."""
        key = os.path.abspath(path)
        with cls._paths_lock:
            if key not in cls._by_path:
                cls._by_path[key] = cls(key)
            return cls._by_path[key]

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._values: dict[str, Value] = {}
        self._stamp: _Stamp | str = "unread"

    def get(self, key: str) -> Value | None:
        """The value stored under `key` (None when there is none)."""
        with self._lock:
            self._refresh()
            return self._values.get(key)

    def update(self, changes: Mapping[str, Plain | None]) -> None:
        """Store `changes` (None removes a key) and write the file; a value that is not `Plain`
        raises `TypeError` before anything is written. A failed write is logged, and the values
        hold for this process."""
        with self._lock:
            self._refresh()
            merged: dict[str, Plain] = dict(self._values)
            for key, value in changes.items():
                merged.pop(key, None)
                if value is not None:
                    merged[key] = value
            data = render(merged)
            self._values = parse(data).values
            try:
                self._stamp = replace_whole(self.path, data)
            except OSError as exc:
                log.warning("cannot save the settings to %s: %s", self.path, exc)

    def _refresh(self) -> None:
        """Read the file again if it is not the one read last."""
        try:
            now: _Stamp = _stamp(os.stat(self.path))
        except OSError:
            now = None
        if now == self._stamp:
            return
        data, self._stamp = self._read()
        parsed = parse(data)
        self._values = parsed.values
        if parsed.refused:
            log.warning(
                "settings %s in %s ignored: not text, a number or a list (a value of another "
                "type is never decoded); their defaults apply",
                ", ".join(parsed.refused),
                self.path,
            )

    def _read(self) -> tuple[bytes, _Stamp]:
        """The file's bytes (none if it is missing, unreadable, not a regular file or too large)
        and the stamp of what was read."""
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        flags |= getattr(os, "O_BINARY", 0)  # Windows: no CRLF translation, no Ctrl-Z as its end
        try:
            with open(os.open(self.path, flags), "rb") as file:
                st = os.fstat(file.fileno())
                if not stat.S_ISREG(st.st_mode):
                    log.warning("settings %s ignored: not a regular file", self.path)
                    return b"", _stamp(st)
                data = file.read(MAX_BYTES + 1)
        except (FileNotFoundError, NotADirectoryError):
            return b"", None
        except OSError as exc:
            log.warning("cannot read the settings in %s: %s", self.path, exc)
            return b"", None
        if len(data) > MAX_BYTES:
            log.warning("settings %s ignored: larger than %d bytes", self.path, MAX_BYTES)
            return b"", _stamp(st)
        return data, _stamp(st)


def replace_whole(path: str, data: bytes) -> _Stamp:
    """Write `data` to a temporary file beside `path`, flushed to disk, then rename it over
    `path` (a link there is replaced, not followed); the stamp of the new file."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".settings-", suffix=".tmp", dir=folder)
    try:
        with open(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
            st = os.fstat(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    return _stamp(st)
