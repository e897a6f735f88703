"""`rlm-desktop sessions health ID`: the known failure modes found in a saved run, and how much
of its documents the models read."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rlm_desktop import formatting as fmt
from rlm_desktop.commands.options import Subcommands, add_json_option, add_session_id
from rlm_desktop.review.health.sources_text import (
    details,
    marker,
    passage_label,
    read_listing,
    state,
)

if TYPE_CHECKING:
    from rlm_desktop.review.health import HealthReport
    from rlm_desktop.review.health.coverage import DocumentCoverage
    from rlm_desktop.review.health.provenance import ReadPassage
    from rlm_desktop.review.health.sources import CheckedSource
    from rlm_desktop.store import Store

SHOWN_GAPS = 4
SHOWN_TURNS = 8
SHOWN_PASSAGES = 8
QUOTE_CHARS = 100
MARKS = {"warning": "!", "info": "i"}


HEALTH_SUMMARY = "known RLM failure modes found in a run, and how much of the documents it read"
HEALTH_DESCRIPTION = (
    "Check a saved run for the known ways RLM runs go wrong (see "
    "docs/findings.md) and measure which parts of its documents reached a model."
)


def add_health_parser(commands: Subcommands) -> argparse.ArgumentParser:
    """Add `sessions health` to the `sessions` subcommands."""
    health = commands.add_parser("health", help=HEALTH_SUMMARY, description=HEALTH_DESCRIPTION)
    add_session_id(health)
    add_json_option(health)
    return health


def health_command(store: Store, args: argparse.Namespace) -> int:
    """Print the run's findings and coverage; 0 whatever was found (findings are not errors)."""
    from rlm_desktop.review.health import session_health

    report = session_health(store, args.id)
    if args.json:
        print(fmt.terminal_json(report.to_json()))
    else:
        print("\n".join(render(report)))
    return 0


def health_json(report: HealthReport) -> dict[str, Any]:
    """The `findings`, `coverage`, `sources` and `read_to_answer` keys of `sessions health
    --json`, to add to other output."""
    shape = report.to_json()
    keys = ("findings", "coverage", "sources", "read_to_answer")
    return {key: shape[key] for key in keys}


def render(report: HealthReport) -> list[str]:
    """The report as lines for a terminal, each inert (names and messages quote documents and
    model output)."""
    return [fmt.terminal_safe(line) for line in _lines(report)]


def _lines(report: HealthReport) -> list[str]:
    lines = [f"Health of session {report.session_id} ({fmt.status_text(report.status)})", ""]
    documents = report.coverage.documents
    if documents:
        lines.append(
            f"Coverage: {report.coverage.share:.0%} of "
            f"{fmt.plural(len(documents), 'document')} reached a model"
        )
        lines += [f"  {_document_line(document)}" for document in documents]
        if report.coverage.unscanned_note:
            lines.append(f"  {report.coverage.unscanned_note}")
    else:
        lines.append("Coverage: the run had no documents")
    lines.append("")
    lines += source_lines(report.sources)
    lines += read_lines(report.read)
    if not report.findings:
        lines.append("No findings: none of the known failure modes showed in this run.")
        return lines
    lines.append(f"Findings ({len(report.findings)}):")
    for finding in report.findings:
        lines.append(
            f"  {MARKS[finding.severity]} {finding.kind} ({finding.rule}): {finding.message}"
        )
        evidence = [f"{call} turn {index + 1}" for call, index in finding.turns[:SHOWN_TURNS]]
        if len(finding.turns) > SHOWN_TURNS:
            evidence.append(f"{len(finding.turns) - SHOWN_TURNS:,} more turns")
        if not evidence and finding.calls:
            evidence = list(finding.calls[:SHOWN_TURNS])
        if evidence:
            lines.append(f"    evidence: {', '.join(evidence)}")
        lines.append(f"    advice: {finding.advice}")
    return lines


def source_lines(sources: Sequence[CheckedSource]) -> list[str]:
    """The answer's sources, checked: one line each (`!` for one not in the documents) with its
    quote, then a blank line; nothing when the answer had none."""
    if not sources:
        return []
    found = sum(1 for source in sources if source.found)
    lines = [f"Sources: {found} of {fmt.plural(len(sources), 'source')} found in the documents"]
    for source in sources:
        mark = " " if source.found else "!"
        where = " · ".join([state(source), *details(source)])
        lines.append(f"  {mark} {marker(source)} {where}")
        lines.append(f"      “{fmt.one_line(source.quote, QUOTE_CHARS)}”")
        if source.note:
            lines.append(f"      {source.note}")
    return [*lines, ""]


def read_lines(read: Sequence[ReadPassage]) -> list[str]:
    """What the sub-calls read to answer, as `read_listing` chooses it, then a blank line."""
    listing = read_listing(read)
    if listing is None:
        return []
    lines = [f"Read to answer: {listing.lead}"]
    lines += [
        f"  {passage_label(passage)} · sub-call {passage.call_id}"
        for passage in listing.passages[:SHOWN_PASSAGES]
    ]
    if len(listing.passages) > SHOWN_PASSAGES:
        lines.append(f"  and {fmt.plural(len(listing.passages) - SHOWN_PASSAGES, 'more passage')}")
    if listing.rest:
        lines.append(f"  {listing.rest}")
    return [*lines, ""]


def summary(report: HealthReport) -> list[str]:
    """The report in brief, for `sessions show`: coverage shares, then one line per finding, each
    inert on a terminal."""
    lines = [f"Health: {fmt.plural(len(report.findings), 'finding')}"]
    documents = report.coverage.documents
    if documents:
        shares = ", ".join(f"{doc.name} {doc.share:.0%}" for doc in documents)
        lines.append(f"  coverage {report.coverage.share:.0%}: {shares}")
        if report.coverage.unscanned_note:
            lines.append(f"  {report.coverage.unscanned_note}")
    lines += [
        f"  {finding.severity} {finding.kind}: {finding.message}" for finding in report.findings
    ]
    if report.sources:
        lines += ["", *source_lines(report.sources)]
    return [fmt.terminal_safe(line) for line in lines]


def _document_line(document: DocumentCoverage) -> str:
    line = f"{document.name}: {document.share:.0%} of {document.chars:,} characters"
    if not document.uncovered:
        return line
    gaps = [f"{start:,}–{end:,}" for start, end in document.uncovered[:SHOWN_GAPS]]
    more = len(document.uncovered) - SHOWN_GAPS
    return f"{line}; unread {', '.join(gaps)}" + (f" and {more:,} more ranges" if more > 0 else "")
