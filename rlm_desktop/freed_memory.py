"""Give the system back the memory a run's documents held, once they are dropped.

glibc's allocator keeps freed heap memory for the process: after a run over 200 MB of documents
the command still held 430 MB, and the health check's read-back of the texts then grew it to
950 MB (the freed pieces were not where the new ones were placed). `malloc_trim` returns what is
free. Windows' and macOS's allocators give large freed blocks back by themselves, and other C
libraries have no such call: there this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys


def give_back_freed_memory() -> bool:
    """Collect garbage and return free heap memory to the system where the C library can;
    whether it could."""
    gc.collect()
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # musl and others have no malloc_trim
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)
    return True
