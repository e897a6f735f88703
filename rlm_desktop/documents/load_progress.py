"""How far a load is: files found, read, loaded and skipped, reported as it goes.

`load_paths` lists every folder first (so the total is known before the first file is read),
then reads the files one by one, calling `LoadOptions.on_progress` with a `LoadProgress` after
each entry listed and each file read. A callback that raises `LoadCancelled` stops the load
there: `load_paths` raises it after stopping its reader process, and nothing is returned.
"""

from __future__ import annotations

from dataclasses import dataclass


class LoadCancelled(Exception):
    """Raised by a progress callback to stop a load; `load_paths` passes it on."""


@dataclass(frozen=True, slots=True)
class LoadProgress:
    """A load's counts so far. While `listing`, `found` is still growing; after it, `found` is
    the number of files to read and `read` of them have been (loaded or left out)."""

    found: int
    listing: bool
    read: int
    loaded: int
    """Files that gave documents."""
    skipped: int
    """Entries left out: by the folder policy (hidden, binary, ignored...) or failing to load."""

    @property
    def fraction(self) -> float | None:
        """The share of the files found that has been read (None while still listing)."""
        if self.listing:
            return None
        return self.read / self.found if self.found else 1.0

    def describe(self) -> str:
        """`1,204 found · 870 loaded · 12 skipped`."""
        return f"{self.found:,} found · {self.loaded:,} loaded · {self.skipped:,} skipped"
