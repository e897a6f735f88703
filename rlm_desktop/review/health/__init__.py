"""Run health: the known ways an RLM run goes wrong, found in a saved session, and how much of
the documents the models actually read. Qt-free; the CLI, the window and the exports render it.

`session_health(store, session_id)` reads a session and returns a `HealthReport`; `analyse`
does the same from a `SessionDetail` already in hand.

The names below are loaded when first used, so that the window can import the light modules
(`finding`) at start-up without loading the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlm_desktop.lazy import lazy_exports

if TYPE_CHECKING:
    from rlm_desktop.review.health.coverage import Coverage, CoverageIndex, DocumentCoverage
    from rlm_desktop.review.health.finding import Finding
    from rlm_desktop.review.health.report import HealthReport, analyse, session_health

_HOMES = {
    "Coverage": "coverage",
    "CoverageIndex": "coverage",
    "DocumentCoverage": "coverage",
    "Finding": "finding",
    "HealthReport": "report",
    "analyse": "report",
    "session_health": "report",
}

__all__ = [
    "Coverage",
    "CoverageIndex",
    "DocumentCoverage",
    "Finding",
    "HealthReport",
    "analyse",
    "session_health",
]


__getattr__ = lazy_exports(__name__, _HOMES)
