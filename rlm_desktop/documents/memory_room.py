"""How much a run's documents may weigh on this machine, checked before a load reads anything.

At its peak a run holds its documents' text several times over (the app, the store, the REPL
worker: `PEAK_FACTOR`, measured by `python -m tests.benchmarks.folder_runs`, docs/figures.md),
so documents weighing more than the available memory over that factor would have a run killed
for want of memory halfway; they are refused before the first file is read instead. The user's
setting `RLM_DESKTOP_MAX_DOCUMENTS_MB` sets the limit by hand: lower, to keep room for other
work; higher, where the user knows the memory is there.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from rlm_desktop.documents.model import MIB, human_size

LIMIT_ENV = "RLM_DESKTOP_MAX_DOCUMENTS_MB"
PEAK_FACTOR = 4.0
"""A run's peak resident memory (every process of it) per byte of its documents, measured."""


class BadLimitSetting(ValueError):
    """`RLM_DESKTOP_MAX_DOCUMENTS_MB` is set to something that is not a size."""


@dataclass(frozen=True)
class DocumentsLimit:
    """The most the documents may weigh together, and where that figure comes from."""

    limit_bytes: int
    why: str


def documents_limit() -> DocumentsLimit:
    """The limit the setting gives, else the available memory over `PEAK_FACTOR`."""
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
        int(available / PEAK_FACTOR),
        f"{human_size(available)} of available memory over the {PEAK_FACTOR:g} times the text "
        "a run holds at its peak",
    )


def refusal(total_bytes: int) -> str | None:
    """Why documents weighing `total_bytes` together cannot be loaded here, or None."""
    try:
        room = documents_limit()
    except BadLimitSetting as bad:
        return str(bad)
    if total_bytes <= room.limit_bytes:
        return None
    return (
        f"the documents weigh {human_size(total_bytes)} together, over the "
        f"{human_size(room.limit_bytes)} limit ({room.why}); load fewer files, run it on a "
        f"machine with more memory, or set {LIMIT_ENV} to another limit"
    )
