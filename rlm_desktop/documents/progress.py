"""A reader's sign of life: long work done piece by piece (OCR, a page at a time) says so, so the
bounded reader's time bound counts the silence since the last piece rather than the whole file.

Outside the reader process (or before it set one up) `working()` does nothing.
"""

from __future__ import annotations

from collections.abc import Callable

_beat: Callable[[], None] | None = None


def report_to(beat: Callable[[], None] | None) -> None:
    """Send each `working()` to `beat` (the reader process sets this up; None stops it)."""
    global _beat
    _beat = beat


def working() -> None:
    """Say that one more piece of the file was done (one page read by OCR)."""
    if _beat is not None:
        _beat()
