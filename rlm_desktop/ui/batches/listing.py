"""Stored batches as the Batches view shows them, Qt-free: a line each for the list (when, the
questions file, rows done of the total, what it cost, whether it is complete, partial or
running), and one batch's rows, those without a result read again from its questions file so
that a row not run yet is listed with why it has none.

A batch is `running` while one of its sessions is being written by a live process, `complete`
when every row it planned has a result, and `partial` otherwise.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rlm_desktop import formatting as fmt
from rlm_desktop.batch.records import SESSIONS, BatchRecord, BatchRecords, RowResult
from rlm_desktop.engine.config import ConfigError

if TYPE_CHECKING:
    from rlm_desktop.batch.questions import QuestionRow
    from rlm_desktop.store import Store

State = Literal["complete", "partial", "running"]
NOT_RUN = "not_run"
"""The status of a row without a result (not run yet, or left out when the budget ran out)."""


@dataclass(frozen=True)
class BatchEntry:
    """One stored batch with its finished rows."""

    record: BatchRecord
    results: tuple[RowResult, ...]
    state: State
    spent_usd: float
    """What its runs cost, cut-short and killed ones too."""

    @property
    def name(self) -> str:
        """The questions file's name."""
        return fmt.file_name(self.record.questions)

    @property
    def done(self) -> int:
        """Rows with a result, whatever their status."""
        return len(self.results)

    @property
    def failed(self) -> int:
        """Rows whose run did not complete normally."""
        return sum(1 for result in self.results if result.failed)

    @property
    def unpriced(self) -> bool:
        """True when a row's run went to a model without a price."""
        return any(result.unpriced for result in self.results)

    @property
    def model(self) -> str:
        """The batch's default model (rows may name their own)."""
        return str(self.record.setting.get("model") or "")


@dataclass(frozen=True)
class BatchRows:
    """A batch's rows for its table: the finished ones in the order they finished, then those
    without a result in the file's order; `note` says why some cannot be listed."""

    rows: tuple[RowResult, ...]
    note: str = ""


def _live(store: Store) -> list[tuple[str, str, str]]:
    """`(batch_id, row_id, session_id)` of every batch session still being written."""
    with store.lock:
        rows = store.db.execute(
            f"SELECT b.batch_id, b.row_id, b.session_id FROM {SESSIONS} b "
            "JOIN sessions s ON s.id = b.session_id WHERE s.status = 'running'"
        ).fetchall()
    return [(str(batch), str(row), str(session)) for batch, row, session in rows]


def batch_entries(store: Store) -> list[BatchEntry]:
    """Every stored batch, newest first."""
    records = BatchRecords(store)
    running = {batch_id for batch_id, _row, _session in _live(store)}
    entries = []
    for record in records.all():
        results = tuple(records.results(record.id))
        state: State = "running" if record.id in running else "partial"
        if state != "running" and len(results) >= record.rows:
            state = "complete"
        spent, _tokens = records.spent(record.id)
        entries.append(BatchEntry(record, results, state, spent))
    return entries


def batch_rows(store: Store, entry: BatchEntry) -> BatchRows:
    """Every row of the batch in its questions file's order (when the file is there and
    unchanged; else the finished ones in the order they finished): its result, or for a row
    without one a stand-in of status `not_run` (`running`, with its session, while a process
    runs it)."""
    record, results = entry.record, entry.results
    missing = record.rows - len(results)
    try:
        rows = _question_rows(record)
    except (ConfigError, OSError, KeyError, TypeError, ValueError) as error:
        if missing <= 0:
            return BatchRows(results)
        noun = "row" if missing == 1 else "rows"
        return BatchRows(results, f"{missing} {noun} without a result not listed: {_reason(error)}")
    done: dict[str, RowResult | None] = {result.row_id: result for result in results}
    live = {} if missing <= 0 else _live_rows(store, record.id)
    listed = [done.pop(row.row_id, None) or _stand_in(record, row, live) for row in rows]
    return BatchRows((*listed, *(result for result in done.values() if result is not None)))


def _question_rows(record: BatchRecord) -> list[QuestionRow]:
    """The batch's rows read again from its questions file (`ValueError` if it changed)."""
    from rlm_desktop.batch.opening import DIGEST
    from rlm_desktop.batch.questions import digest, read_questions
    from rlm_desktop.evaluation.settings import Setting

    path = Path(record.questions)
    if digest(path) != record.options.get(DIGEST):
        raise ValueError(f"{path.name} has changed since the batch started")
    return read_questions(path, Setting.from_json(record.setting))


def _live_rows(store: Store, batch_id: str) -> dict[str, str]:
    """The session of each row of the batch a live process is running, by row id."""
    return {row: session for batch, row, session in _live(store) if batch == batch_id}


def _stand_in(record: BatchRecord, row: QuestionRow, live: dict[str, str]) -> RowResult:
    """A row without a result: running now, or not run yet."""
    running = row.row_id in live
    why = (
        "running now" if running else f"not run yet: rlm-desktop batch --resume {record.id} runs it"
    )
    return dataclasses.replace(
        _NOT_RUN, batch_id=record.id, row_id=row.row_id, question=row.question,
        documents=list(row.documents), session_id=live.get(row.row_id),
        status="running" if running else NOT_RUN, error=why,
    )  # fmt: skip


def _reason(error: Exception) -> str:
    if isinstance(error, FileNotFoundError):
        return "its questions file is not there any more"
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


_NOT_RUN = RowResult(
    batch_id="", row_id="", question="", documents=[], session_id=None, status=NOT_RUN,
    answer="", sources=[], cost_usd=0.0, input_tokens=0, output_tokens=0, wall_s=0.0,
    unpriced=False, findings=[], error=None, executor="", node="", attempts=1,
)  # fmt: skip
