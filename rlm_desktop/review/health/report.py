"""A run's health: every finding and the documents' coverage, from a saved session."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rlm_desktop.engine.sandbox.given_sources import sources_from_text
from rlm_desktop.review.health.answers import brittle_answer_findings
from rlm_desktop.review.health.coding import weak_coder_findings
from rlm_desktop.review.health.cost import PastRun, cost_findings, resent_documents_findings
from rlm_desktop.review.health.coverage import Coverage, CoverageIndex
from rlm_desktop.review.health.depth import depth_findings
from rlm_desktop.review.health.document_parts import document_parts
from rlm_desktop.review.health.duplicates import duplicate_findings
from rlm_desktop.review.health.ending import ending_findings, retry_findings
from rlm_desktop.review.health.finding import Finding
from rlm_desktop.review.health.provenance import Passage, ReadPassage, read_to_answer
from rlm_desktop.review.health.quotes import unsupported_quote_findings
from rlm_desktop.review.health.replies import no_reply_findings, repeating_output_findings
from rlm_desktop.review.health.serial import serial_findings
from rlm_desktop.review.health.short_input import short_input_findings
from rlm_desktop.review.health.sources import CheckedSource, check_sources
from rlm_desktop.review.health.stored import not_stored_findings
from rlm_desktop.review.health.truncation import truncation_findings
from rlm_desktop.review.health.view import RunView
from rlm_desktop.store.detail import SessionDetail, load_detail

if TYPE_CHECKING:
    from rlm_desktop.engine.profiles import Profile
    from rlm_desktop.store.store import Store

HISTORY_LIMIT = 100_000


@dataclass(frozen=True)
class HealthReport:
    """What the health check says about one run."""

    session_id: str
    status: str
    findings: tuple[Finding, ...]
    coverage: Coverage
    sources: tuple[CheckedSource, ...] = ()
    """The answer's sources and quoted passages, checked against the documents."""
    read: tuple[ReadPassage, ...] = ()
    """The passages the run's sub-calls were given, those the answer repeats first."""

    @property
    def warnings(self) -> tuple[Finding, ...]:
        """The findings of severity `warning`."""
        return tuple(f for f in self.findings if f.severity == "warning")

    def to_json(self) -> dict[str, Any]:
        """`{"session_id", "status", "findings", "coverage", "sources", "read_to_answer"}`."""
        return {
            "session_id": self.session_id,
            "status": self.status,
            "findings": [finding.to_json() for finding in self.findings],
            "coverage": self.coverage.to_json(),
            "sources": [source.to_json() for source in self.sources],
            "read_to_answer": [passage.to_json() for passage in self.read],
        }


def analyse(
    detail: SessionDetail,
    documents: Sequence[tuple[str, str]],
    history: Sequence[PastRun] = (),
    profiles: Sequence[Profile] = (),
) -> HealthReport:
    """The findings and coverage of a session read from the store.

    `documents` are its `(name, text)` pairs in load order, `history` the user's other runs (for
    the cost comparison) and `profiles` the prompt profiles (for truncation advice).
    """
    view = RunView(detail)
    parts = document_parts(documents)
    findings = [
        *ending_findings(view),
        *retry_findings(view),
        *no_reply_findings(view),
        *weak_coder_findings(view),
        *repeating_output_findings(view),
        *depth_findings(view),
        *brittle_answer_findings(view),
        *cost_findings(view, history),
        *duplicate_findings(view),
        *serial_findings(view),
        *short_input_findings(view, parts.texts),
        *truncation_findings(view, profiles),
        *not_stored_findings(view),
    ]
    index = CoverageIndex(documents)
    quoted: Counter[str] = Counter()
    passages: defaultdict[str, list[Passage]] = defaultdict(list)
    if any(parts.lengths):
        for call_id, found in read_passages(index, coverage_sources(view)):
            passages[call_id] += found
            quoted[call_id] += index.mark(found)
    coverage = index.coverage()
    findings += resent_documents_findings(quoted, coverage)
    answer = answer_of(view)
    sources = _checked(view, documents, answer)
    findings += unsupported_quote_findings(view, sources)
    findings.sort(key=lambda finding: finding.severity != "warning")
    return HealthReport(
        session_id=detail.session_id,
        status=str(detail.session["status"]),
        findings=tuple(findings),
        coverage=coverage,
        sources=sources,
        read=read_to_answer(view, passages, parts.names, answer),
    )


def session_sources(store: Store, session_id: str) -> tuple[CheckedSource, ...]:
    """The answer's sources of a saved session, checked against its documents (the health
    check's `sources`, without the rest of it)."""
    view = RunView(load_detail(store, session_id))
    return _checked(view, store.stored_documents(view.detail.session_id), answer_of(view))


def answer_of(view: RunView) -> str:
    """The answer the run's root call submitted ("" for a run that ended without one)."""
    root = view.root()
    return str(root["answer"] or "") if root is not None else ""


def _checked(
    view: RunView, documents: Sequence[tuple[str, str]], answer: str
) -> tuple[CheckedSource, ...]:
    root = view.root()
    if root is None or not answer:
        return ()
    given = sources_from_text(root.get("answer_sources"))
    return check_sources(documents, given, answer, str(view.session.get("query") or ""))


Source = str | Passage
"""What a model was given: a text, or a span of the documents it is (`prompts.py`)."""


def coverage_sources(view: RunView) -> Iterator[tuple[str, Source]]:
    """Everything a model of the run read that can quote the documents, with the call it went
    to: the prompt of every call whose model replied (one sent to a provider that refused it was
    read by no model) — as the span of the documents it is, when it was kept as one — and every
    observation an RLM call's model was shown after its code ran."""
    for call in view.calls:
        if call["prompt"] and view.replied(call["id"]):
            span = [call.get(f"prompt_{part}") for part in ("document", "start", "end")]
            number, start, end = span
            if number is not None and start is not None and end is not None:
                yield call["id"], (int(number), int(start), int(end))
            else:
                yield call["id"], call["prompt"]
    for turn in view.detail.turns:
        if turn["observation"]:
            yield turn["call_id"], turn["observation"]


def read_passages(
    index: CoverageIndex, sources: Iterable[tuple[str, Source]]
) -> Iterator[tuple[str, list[Passage]]]:
    """The passages of the documents each source quotes, with its call, in the sources' order.

    Each distinct text is scanned once however many calls were given it, shortest first, so
    the probe limit (`coverage.PROBE_LIMIT`) falls on the longest texts; a span is taken as it is.
    """
    given = list(sources)
    texts = sorted({source for _, source in given if isinstance(source, str)}, key=len)
    scanned = {text: index.passages(text) for text in texts}
    for call_id, source in given:
        yield call_id, scanned[source] if isinstance(source, str) else index.span(*source)


def session_health(store: Store, session_id: str) -> HealthReport:
    """The health of a saved session (an id or a unique prefix); raises `SessionNotFound`."""
    detail = load_detail(store, session_id)
    return analyse(detail, store.stored_documents(detail.session_id), past_runs(store), profiles())


def past_runs(store: Store) -> list[PastRun]:
    """The user's finished runs, as the cost comparison reads them."""
    return [
        PastRun(
            session_id=row["id"],
            cost_usd=row["cost_usd"],
            tokens=int(row["input_tokens"] or 0) + int(row["output_tokens"] or 0),
            unpriced=bool(row["unpriced"]),
        )
        for row in store.list_sessions(limit=HISTORY_LIMIT)
        if row["status"] not in ("running",)
    ]


def profiles() -> list[Profile]:
    """The prompt profiles (for the truncation advice); none when they cannot be read."""
    from rlm_desktop import paths
    from rlm_desktop.engine.config import ConfigError
    from rlm_desktop.engine.profiles import list_profiles

    try:
        return list_profiles(paths.profile_folders())
    except ConfigError:
        return []
