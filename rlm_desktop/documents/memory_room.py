"""How much a run's documents may weigh on this machine, checked before a load reads anything.

At its peak a run holds a fixed part (the app, its sandbox's processes: `BASE_BYTES`) and its
documents' text about twice over (the app's copy and the REPL worker's: `PEAK_FACTOR`, with a
margin over what `python -m tests.benchmarks.folder_runs` measured, docs/figures.md), so
documents weighing more than the available memory allows for that would have a run killed for
want of memory halfway; they are refused before the first file is read instead. The user's
setting `RLM_DESKTOP_MAX_DOCUMENTS_MB` sets the limit by hand: lower, to keep room for other
work; higher, where the user knows the memory is there.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from rlm_desktop.documents.model import MIB, human_size

LIMIT_ENV = "RLM_DESKTOP_MAX_DOCUMENTS_MB"
BASE_BYTES = 300 * MIB
"""A run's peak resident memory (every process of it) over 1 MB of documents: 270 MB measured."""
PEAK_FACTOR = 3.0
"""What a run's peak grows by per byte of its documents: 2.06 measured from 20 MB to 1 GB of
repeated text, 2.67 at 1 GB of text that repeats nothing (the health check's index at the end)."""


class BadLimitSetting(ValueError):
    """`RLM_DESKTOP_MAX_DOCUMENTS_MB` is set to something that is not a size."""


@dataclass(frozen=True)
class DocumentsLimit:
    """The most the documents may weigh together, and where that figure comes from."""

    limit_bytes: int
    why: str


def documents_limit() -> DocumentsLimit:
    """The limit the setting gives, else what the available memory leaves over `BASE_BYTES`,
    over `PEAK_FACTOR`."""
    raw = os.environ.get(LIMIT_ENV, "").strip()
    if raw:
        try:
            megabytes = float(raw)
        except ValueError:
            megabytes = math.nan
        if not (math.isfinite(megabytes) and megabytes > 0):
            raise BadLimitSetting(
                f"{LIMIT_ENV}={raw} is not a number of megabytes; set it to a positive number "
                "(500 for 500 MB) or unset it"
            )
        return DocumentsLimit(int(megabytes * MIB), f"set by {LIMIT_ENV}={raw}")
    import psutil

    available = psutil.virtual_memory().available
    return DocumentsLimit(
        int(max(0, available - BASE_BYTES) / PEAK_FACTOR),
        f"{human_size(available)} of available memory, less {human_size(BASE_BYTES)} for the app, "
        f"over the {PEAK_FACTOR:g} times the text a run holds at its peak",
    )


def refusal(total_bytes: int, listed: bool = False) -> str | None:
    """Why documents weighing `total_bytes` together cannot be loaded here, or None.

    `listed`: they are already loaded, and it is a run of them all that is refused (the window
    adds folders one at a time, each within the limit on its own); the text they hold is what
    is weighed then.
    """
    try:
        room = documents_limit()
    except BadLimitSetting as bad:
        return str(bad)
    if total_bytes <= room.limit_bytes:
        return None
    weight, fewer = (
        ("hold {} of text", "remove some documents") if listed else ("weigh {}", "load fewer files")
    )
    return (
        f"the documents {weight.format(human_size(total_bytes))} together, over the "
        f"{human_size(room.limit_bytes)} limit ({room.why}); {fewer}, run it on a machine with "
        f"more memory, or set {LIMIT_ENV} to another limit"
    )
