"""The line that counts a command-line load: live on a terminal, one line in a log."""

from __future__ import annotations

import io
import time

from rlm_desktop.commands.load_line import SHOW_AFTER_S, LoadLine
from rlm_desktop.documents.load_progress import LoadProgress


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def counts(read: int, listing: bool = False) -> LoadProgress:
    return LoadProgress(found=4_000, listing=listing, read=read, loaded=read, skipped=0)


def test_on_a_terminal_the_line_counts_in_place_a_few_times_a_second() -> None:
    terminal = Terminal()
    line = LoadLine(terminal)
    time.sleep(SHOW_AFTER_S)
    line.on_progress(counts(0, listing=True))
    for read in range(1, 4_001):
        line.on_progress(counts(read))
    line.finish(4_000, 50_000_000)

    shown = terminal.getvalue()
    updates = shown.count("\r") - 1  # the last one brings the closing line
    assert 1 <= updates <= 3  # thousands of files in well under a second: a few updates
    assert shown.startswith("\rlisting documents: 4,000 found · 0 loaded · 0 skipped\x1b[K")
    closing = shown[shown.rindex("\r") :]
    assert closing.startswith("\rloaded 4,000 documents (50.00M tokens) in ")
    assert closing.endswith(" s\x1b[K\n")


def test_in_a_log_only_the_closing_line_is_written() -> None:
    log = io.StringIO()
    line = LoadLine(log)
    time.sleep(SHOW_AFTER_S)
    for read in range(1, 101):
        line.on_progress(counts(read))
    line.finish(1, 12)

    (written,) = log.getvalue().splitlines()
    assert written.startswith("loaded 1 document (12 tokens) in ")  # of 4,000 files found
    assert "\r" not in log.getvalue()
    assert "\x1b" not in log.getvalue()


def test_a_quick_load_shows_no_counter_and_a_failed_one_leaves_no_line() -> None:
    terminal = Terminal()
    line = LoadLine(terminal)
    line.on_progress(counts(1))
    line.clear()

    assert terminal.getvalue() == ""


def test_a_small_load_ends_without_a_line() -> None:
    """Three files: the run's own lines come at once; an error after it stays one line."""
    log = io.StringIO()
    line = LoadLine(log)
    line.on_progress(LoadProgress(found=3, listing=False, read=3, loaded=3, skipped=0))
    line.finish(3, 900)

    assert log.getvalue() == ""
