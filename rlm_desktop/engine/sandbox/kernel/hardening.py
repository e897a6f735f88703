"""Keep the application's own memory and environment away from model code running as the same user."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import cache

PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4


@cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name else None


def protect_application_process() -> bool:
    """Mark this process non-dumpable on Linux, once, before the first worker starts.

    Workers run as the same user, so without this model code could read `/proc/<app>/environ` (where
    a provider key exported in the shell lives) or the app's memory. A non-dumpable process's `/proc`
    files belong to root. Returns True when the protection is in place.
    """
    libc = _libc()
    if libc is None:
        return False
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        return False
    return is_protected()


def is_protected() -> bool:
    """True when this process is non-dumpable (Linux only)."""
    libc = _libc()
    return libc is not None and libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
