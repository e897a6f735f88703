"""What `rlm-desktop run` says while its documents load: a line on stderr that counts.

On a terminal the line is rewritten in place, at most `UPDATES_PER_S` times a second, and ends
with what was loaded and how long it took. When stderr is not a terminal (a log, a pipe) only
that last line is written, so logs get one line, not thousands. A small load (fewer than
`BIG_FILES` files and `BIG_TOKENS` tokens) ends without a line: its run's first lines come at
once, and a mistake in the run's settings stays a one-line error.
"""

from __future__ import annotations

import time
from typing import TextIO

from rlm_desktop import formatting as fmt
from rlm_desktop.documents.load_progress import LoadProgress

UPDATES_PER_S = 10
SHOW_AFTER_S = 0.3
"""A load quicker than this says nothing while it goes (no flicker on a small folder)."""
BIG_FILES = 100
BIG_TOKENS = 2_500_000


class LoadLine:
    """Counts a load on `stream` (use `on_progress` as the loader's callback, then `finish`)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._live = stream.isatty()
        self._started = time.monotonic()
        self._shown_at = 0.0
        self._shown = False
        self._last: LoadProgress | None = None

    def on_progress(self, progress: LoadProgress) -> None:
        """Note the counts; on a terminal, show them when it is time."""
        self._last = progress
        now = time.monotonic()
        if not self._live or now - self._started < SHOW_AFTER_S:
            return
        if now - self._shown_at < 1 / UPDATES_PER_S:
            return
        self._shown_at = now
        verb = "listing" if progress.listing else "loading"
        self._write(f"\r{verb} documents: {progress.describe()}\x1b[K")
        self._shown = True

    def finish(self, documents: int, tokens: int) -> None:
        """The last line: what was loaded, and how long it took (nothing for a small load that
        showed no counter)."""
        seconds = time.monotonic() - self._started
        skipped = self._last.skipped if self._last is not None else 0
        found = self._last.found if self._last is not None else documents
        if not self._shown and found < BIG_FILES and tokens < BIG_TOKENS:
            return
        left_out = f", {skipped:,} left out" if skipped else ""
        line = (
            f"loaded {fmt.plural(documents, 'document')} ({fmt.tokens(tokens)} tokens"
            f"{left_out}) in {seconds:.1f} s"
        )
        self._write(("\r" if self._shown else "") + line + ("\x1b[K" if self._shown else "") + "\n")

    def clear(self) -> None:
        """Take the live line away (the load failed: its error says why)."""
        if self._shown:
            self._write("\r\x1b[K")

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()
