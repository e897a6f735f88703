"""Findings of many saved runs, one at a time and remembered: for a list of sessions.

The history (for the cost comparison) and the prompt profiles are read once per tally; each
session's findings are kept in memory by database and id, so a list opened again shows them at
once. A session still running is not kept: its findings are not final.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rlm_desktop.review.health.report import analyse, past_runs, profiles
from rlm_desktop.store.detail import load_detail

if TYPE_CHECKING:
    from rlm_desktop.engine.profiles import Profile
    from rlm_desktop.review.health.cost import PastRun
    from rlm_desktop.review.health.finding import Finding
    from rlm_desktop.store.store import Store


class HealthTally:
    """The findings of sessions of one store, computed on demand and remembered."""

    _kept: ClassVar[dict[tuple[str, str], tuple[Finding, ...]]] = {}

    def __init__(self, store: Store) -> None:
        self.store = store
        self._history: list[PastRun] | None = None
        self._profiles: list[Profile] | None = None

    def known(self, session_id: str) -> tuple[Finding, ...] | None:
        """The session's findings if already computed, else None."""
        return self._kept.get((str(self.store.path), session_id))

    def findings(self, session_id: str) -> tuple[Finding, ...]:
        """The session's findings, computed now unless remembered; raises `SessionNotFound`."""
        known = self.known(session_id)
        if known is not None:
            return known
        if self._history is None or self._profiles is None:
            self._history, self._profiles = past_runs(self.store), profiles()
        detail = load_detail(self.store, session_id)
        documents = self.store.document_texts(detail.session_id)
        report = analyse(detail, documents, self._history, self._profiles)
        if report.status != "running":
            self._kept[(str(self.store.path), session_id)] = report.findings
        return report.findings
