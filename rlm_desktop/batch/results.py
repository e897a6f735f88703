"""A batch's results written out: `results.csv` and `results.json`, one row per question in
the file's order, and the `batch --json` object (the same as `results.json`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlm_desktop.batch.records import RowResult
from rlm_desktop.batch.runner import SPENT, Batch, unrun_result
from rlm_desktop.exports.csv_files import write_csv

COLUMNS = (
    "row_id", "question", "documents", "status", "answer", "sources", "cost_usd",
    "input_tokens", "output_tokens", "wall_s", "findings", "session_id", "executor", "node",
    "attempts", "error",
)  # fmt: skip
"""The columns of `results.csv`."""
SOURCE_KEYS = ("quote", "document", "match")
FINDING_KEYS = ("kind", "message")
NOT_RUN = "not run yet: resume the batch to run it"


def every_row(batch: Batch) -> list[RowResult]:
    """A result for every row of the batch, in the file's order: its saved result, else one
    that says why it has none (`skipped` by the total budget, or `not_run`)."""
    saved = {result.row_id: result for result in batch.results()}
    skipped = {skip.row_id for skip in batch.skipped}
    executor = batch.runs.executor
    return [
        saved.get(row.row_id)
        or (
            unrun_result(batch.batch_id, row, "skipped", SPENT, executor)
            if row.row_id in skipped
            else unrun_result(batch.batch_id, row, "not_run", NOT_RUN, executor)
        )
        for row in batch.rows
    ]


def summary_json(batch: Batch, out: Path, results: Sequence[RowResult]) -> dict[str, Any]:
    """The `batch --json` object: the batch, where its files are, its counts, what it spent
    (every run of it, cut-short ones too) and every row's result."""
    ran = [result for result in results if result.status not in ("skipped", "not_run")]
    spent_usd, _tokens = batch.records.spent(batch.batch_id)
    return {
        "batch_id": batch.batch_id,
        "out": str(out),
        "executor": batch.runs.executor,
        "rows": len(results),
        "done": sum(1 for result in ran if not result.failed),
        "failed": sum(1 for result in ran if result.failed),
        "skipped": len(results) - len(ran),
        "cost_usd": spent_usd,
        "results": [result.to_json() for result in results],
    }


def csv_cells(result: RowResult) -> dict[str, Any]:
    """A row of `results.csv`: documents `;`-separated, sources and findings as JSON lists
    of their main keys."""
    row = result.to_json()
    row["documents"] = ";".join(result.documents)
    row["sources"] = _json_list(result.sources, SOURCE_KEYS)
    row["findings"] = _json_list(result.findings, FINDING_KEYS)
    return {column: "" if row[column] is None else row[column] for column in COLUMNS}


def _json_list(entries: Sequence[dict[str, Any]], keys: Sequence[str]) -> str:
    return json.dumps([{key: entry.get(key) for key in keys} for entry in entries])


def write_results(out: Path, summary: dict[str, Any], results: Sequence[RowResult]) -> None:
    """`results.json` (the summary) and `results.csv` (one row per question, no cell a
    spreadsheet would run: `exports.csv_files`) in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    rows = (csv_cells(result) for result in results)
    write_csv(out / "results.csv", COLUMNS, ([row[column] for column in COLUMNS] for row in rows))


def conclude(batch: Batch, out: Path) -> dict[str, Any]:
    """Every row's result written to `out`; returns the summary."""
    results = every_row(batch)
    summary = summary_json(batch, out, results)
    write_results(out, summary, results)
    return summary
