"""A row's documents, loaded when the row runs (2,000 folders never sit in memory at once), with
the loader `rlm-desktop run --doc` uses."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rlm_desktop.engine import ContextDocument

CHARS_PER_TOKEN = 4
LEFT_OUT_SHOWN = 3
"""Files a folder held but the row leaves out, named in its warning; the rest are counted."""


class NothingLoaded(Exception):
    """None of a row's documents could be loaded; the message says why, in one line."""


@dataclass(frozen=True)
class Loaded:
    """A row's documents as the engine takes them, and what the loader had to say."""

    documents: list[ContextDocument]
    warnings: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        """The documents' tokens, as the loader counted them (about four characters a token
        where it gave no count)."""
        return sum(
            len(document.text) // CHARS_PER_TOKEN if document.tokens is None else document.tokens
            for document in self.documents
        )


def load_row(
    paths: Sequence[Path], model: str, timeout_s: float | None, ocr: bool = True
) -> Loaded:
    """Load `paths` for a run of `model`, within `timeout_s` (the run's own limit); paths that
    cannot be loaded and files left out of folders become warnings; `NothingLoaded` when no
    document loads."""
    from rlm_desktop.documents import LoadOptions, load_paths

    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    result = load_paths(paths, LoadOptions(model=model, deadline=deadline, ocr=ocr))
    failed = [str(error) for error in result.errors]
    if not result.documents:
        reason = "; ".join(failed) or f"nothing loadable in {', '.join(map(str, paths))}"
        raise NothingLoaded(f"no document could be loaded: {reason}")
    warnings = [f"not loaded: {line}" for line in failed]
    if result.skipped:
        shown = "; ".join(str(skip) for skip in result.skipped[:LEFT_OUT_SHOWN])
        more = len(result.skipped) - LEFT_OUT_SHOWN
        warnings.append(
            f"left out {len(result.skipped)} files ({shown}{f'; {more} more' if more > 0 else ''})"
        )
    return Loaded([document.to_context() for document in result.documents], warnings)
