"""An evaluation's results written out: the table as text, and CSV and JSON files."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlm_desktop import formatting
from rlm_desktop.evaluation.runner import Evaluation
from rlm_desktop.evaluation.summary import RESAMPLES, SettingSummary, summarize_all
from rlm_desktop.evaluation.threshold import Suggestion, suggest
from rlm_desktop.evaluation.trial import COLUMNS, TrialResult
from rlm_desktop.exports.csv_files import write_csv

HEADERS = ("setting", "runs", "score", "95% interval", "cost mean", "median", "p95", "wall",
           "sub-calls", "failures", "cites gold", "not found")  # fmt: skip
INTERVAL_NOTE = f"95% interval: percentile bootstrap over runs ({RESAMPLES:,} resamples)."
SOURCES_NOTE = (
    "cites gold: share of the planted passages (the needle's sentence, the counted lines, the "
    "definitions) that the answers' sources cover, over the n answers to tasks that have them; "
    "not found: the answers' sources and quotes that are not in the documents, of those checked."
)


def _number(value: float, digits: int = 2) -> str:
    return "–" if math.isnan(value) else f"{value:.{digits}f}"


def _cost(value: float, unpriced: bool) -> str:
    return "–" if math.isnan(value) else formatting.cost(value, unpriced)


def table_rows(summaries: Sequence[SettingSummary]) -> list[tuple[str, ...]]:
    """The table's cells, one tuple a setting."""
    return [
        (
            s.name,
            str(s.runs),
            _number(s.score_mean),
            "–" if not s.runs else f"{_number(s.score_ci95[0])}–{_number(s.score_ci95[1])}",
            _cost(s.cost_mean, s.unpriced),
            _cost(s.cost_median, s.unpriced),
            _cost(s.cost_p95, s.unpriced),
            "–" if math.isnan(s.wall_mean) else formatting.seconds(s.wall_mean),
            _number(s.sub_calls_mean, 1),
            str(s.failures),
            cites_gold_cell(s),
            not_found_cell(s),
        )
        for s in summaries
    ]


def cites_gold_cell(summary: SettingSummary) -> str:
    """`0.67 (n=3)`, or `–` when no answer had a gold location to cite."""
    if not summary.source_gold_runs:
        return "–"
    return f"{_number(summary.source_gold_share)} (n={summary.source_gold_runs})"


def not_found_cell(summary: SettingSummary) -> str:
    """`0.25 (1/4)`, or `–` when no source was checked."""
    if not summary.sources_checked:
        return "–"
    return (
        f"{_number(summary.not_found_share)} "
        f"({summary.sources_not_found}/{summary.sources_checked})"
    )


def footer(
    suggestions: Sequence[Suggestion],
    spent_usd: float,
    max_cost_usd: float | None,
    pending: int,
) -> list[str]:
    """The lines under the table: the interval method, what the source columns mean, spend
    against the budget, what is left to run, and the suggested `auto` thresholds."""
    budget = f" of {formatting.dollars(max_cost_usd)}" if max_cost_usd is not None else ""
    lines = [INTERVAL_NOTE, SOURCES_NOTE, f"Spent {formatting.dollars(spent_usd)}{budget}."]
    if pending:
        lines.append(f"{formatting.plural(pending, 'run')} not run yet (resume to run them).")
    lines.extend(s.sentence() for s in suggestions)
    return lines


def render_table(summaries: Sequence[SettingSummary], footer_lines: Sequence[str]) -> str:
    """The results as an aligned text table with its footer."""
    rows = [HEADERS, *table_rows(summaries)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([*lines, "", *footer_lines])


def summary_json(
    evaluation_id: str,
    out: Path,
    summaries: Sequence[SettingSummary],
    suggestions: Sequence[Suggestion],
    footer_lines: Sequence[str],
    executor: str = "local",
) -> dict[str, Any]:
    """The `eval --json` object of DESIGN.md, plus the threshold suggestions and the footer;
    `executor` is where this sitting ran its trials (`local` or `ray`)."""
    return {
        "evaluation_id": evaluation_id,
        "out": str(out),
        "executor": executor,
        "settings": [s.to_json() for s in summaries],
        "auto_threshold": [
            {"model": s.model, "tokens": s.threshold, "sentence": s.sentence()} for s in suggestions
        ],
        "notes": list(footer_lines),
    }


def write_files(out: Path, summary: dict[str, Any], results: Sequence[TrialResult]) -> None:
    """`summary.json`, `summary.csv` (one row a setting) and `runs.csv` (one row a run), no
    cell of them a spreadsheet would run (`exports.csv_files`)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    settings = summary["settings"]
    columns = [c for c in settings[0] if c != "score_ci95"] if settings else []
    write_csv(
        out / "summary.csv",
        [*columns, "score_ci95_low", "score_ci95_high"],
        ([*(row[c] for c in columns), *row["score_ci95"]] for row in settings),
    )
    runs = (result.to_json() for result in results)
    write_csv(out / "runs.csv", COLUMNS, ([row[column] for column in COLUMNS] for row in runs))


def conclude(evaluation: Evaluation, out: Path) -> tuple[str, dict[str, Any]]:
    """The evaluation's table (with its footer) and its JSON summary, written to `out`."""
    results = evaluation.results()
    summaries = summarize_all([s.name for s in evaluation.settings], results)
    suggestions = suggest(evaluation.settings, results)
    spent, _tokens = evaluation.records.spent(evaluation.evaluation_id)
    lines = footer(suggestions, spent, evaluation.options.max_cost_usd, len(evaluation.pending()))
    summary = summary_json(
        evaluation.evaluation_id, out, summaries, suggestions, lines, evaluation.runs.executor
    )
    write_files(out, summary, results)
    return render_table(summaries, lines), summary
