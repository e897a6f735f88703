"""Memory a run's documents held goes back to the system once they are dropped."""

from __future__ import annotations

import sys

import psutil
import pytest

from rlm_desktop.freed_memory import give_back_freed_memory

MB = 1_000_000


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator keeps it")
def test_texts_dropped_are_given_back() -> None:
    """Four thousand 50 KB texts (a 200 MB folder's worth), each followed by a little that
    stays (as a run's records do), dropped: the process's resident memory falls back by most of
    it. glibc alone keeps the holes between what stays."""
    process = psutil.Process()
    texts, kept = [], []
    for number in range(4_000):
        texts.append(f"{number:05}" + "x" * 50_000)
        kept.append(f"{number:05}" + "y" * 2_000)
    holding = process.memory_info().rss
    del texts

    assert give_back_freed_memory()
    assert process.memory_info().rss < holding - 150 * MB
