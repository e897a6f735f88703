"""Batches in the sessions database: what each was asked to do, which session ran which row,
and each finished row's result. The tables are this package's own, made here with sqlite-utils
(the store's migrations do not know them), as the evaluation's are; every row's run stays a
normal session of the store, hidden from the session browser by its tag (`store.trials`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rlm_desktop.evaluation.records import spent_by_tagged

if TYPE_CHECKING:
    from rlm_desktop.store import Store

BATCHES, SESSIONS, RESULTS = "batches", "batch_sessions", "batch_results"
JSON_COLUMNS = ("documents", "sources", "findings")
"""Result columns kept as JSON text."""


@dataclass(frozen=True)
class BatchRecord:
    """What a batch was asked to do, enough to read its questions again and resume it."""

    id: str
    created_at: str
    questions: str
    """The questions file's absolute path."""
    rows: int
    setting: dict[str, Any]
    """The default setting (`Setting.to_json`); rows may override its keys."""
    options: dict[str, Any]
    """Endpoint, prices, concurrency, total budget and time limit (`EvaluationOptions.to_json`),
    and `questions_sha256`, the questions file's digest when the batch started."""


@dataclass(frozen=True)
class RowResult:
    """How one row's run ended: its answer, the answer's sources checked against the row's
    documents, and the run's findings.

    `status` is the run's (`completed`, `max_turns`, `budget_exceeded`, `timeout`, `error`), or
    `refused` when the engine would not start it, or `error` when its documents could not be
    loaded (the reason in `error`, with any warning). `answer` is empty for a run that ended
    without one (its draft is in the session). `sources` and `findings` are the health
    check's JSON entries (`CheckedSource.to_json`, `Finding.to_json`).
    """

    batch_id: str
    row_id: str
    question: str
    documents: list[str]
    session_id: str | None
    status: str
    answer: str
    sources: list[dict[str, Any]]
    cost_usd: float
    input_tokens: int
    output_tokens: int
    wall_s: float
    unpriced: bool
    findings: list[dict[str, Any]]
    error: str | None
    executor: str
    node: str
    attempts: int

    @property
    def failed(self) -> bool:
        """True when the row's run did not complete normally."""
        return self.status != "completed"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record, read back by `from_row` (after `to_row`)."""
        return asdict(self)

    def to_row(self) -> dict[str, Any]:
        """The record as a `batch_results` row (lists as JSON text, `unpriced` as 0 or 1)."""
        row = self.to_json()
        row.update({name: json.dumps(row[name]) for name in JSON_COLUMNS})
        row["unpriced"] = int(self.unpriced)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RowResult:
        """A result from a stored row (extra columns ignored)."""
        values: dict[str, Any] = {f.name: row.get(f.name) for f in fields(cls)}
        values.update({name: json.loads(values[name] or "[]") for name in JSON_COLUMNS})
        values["unpriced"] = bool(values["unpriced"])
        values["executor"] = values["executor"] or "local"
        values["node"] = values["node"] or ""
        values["attempts"] = int(values["attempts"] or 1)
        return cls(**values)


class BatchRecords:
    """Reads and writes the batch tables through a `Store` (under its lock)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        with store.transaction():
            db = store.db
            db.table(BATCHES).create(
                {"id": str, "created_at": str, "questions": str, "rows": int, "setting": str,
                 "options": str},
                pk="id",
                if_not_exists=True,
            )  # fmt: skip
            db.table(SESSIONS).create(
                {"session_id": str, "batch_id": str, "row_id": str, "started_at": str},
                pk="session_id",
                if_not_exists=True,
            )
            db.table(RESULTS).create(
                {
                    "batch_id": str,
                    "row_id": str,
                    "question": str,
                    "documents": str,
                    "session_id": str,
                    "status": str,
                    "answer": str,
                    "sources": str,
                    "cost_usd": float,
                    "input_tokens": int,
                    "output_tokens": int,
                    "wall_s": float,
                    "unpriced": int,
                    "findings": str,
                    "error": str,
                    "executor": str,
                    "node": str,
                    "attempts": int,
                    "finished_at": str,
                },  # fmt: skip
                pk=("batch_id", "row_id"),
                if_not_exists=True,
            )
            db.execute(f"CREATE INDEX IF NOT EXISTS {SESSIONS}_by_batch ON {SESSIONS}(batch_id)")

    def create(
        self,
        batch_id: str,
        questions: str,
        rows: int,
        setting: dict[str, Any],
        options: dict[str, Any],
    ) -> None:
        """Record a new batch."""
        row = {
            "id": batch_id,
            "created_at": _now(),
            "questions": questions,
            "rows": rows,
            "setting": json.dumps(setting),
            "options": json.dumps(options),
        }
        with self.store.transaction():
            self.store.db.table(BATCHES).insert(row)

    def update_options(self, batch_id: str, options: dict[str, Any]) -> None:
        """Replace a batch's options (a resume that raises the budget, say)."""
        with self.store.transaction():
            self.store.db.table(BATCHES).update(batch_id, {"options": json.dumps(options)})

    def find(self, batch_id: str) -> BatchRecord | None:
        """The batch with this id, or None."""
        with self.store.lock:
            rows = list(self.store.db.table(BATCHES).rows_where("id = ?", [batch_id]))
        if not rows:
            return None
        row = rows[0]
        return BatchRecord(
            id=row["id"],
            created_at=row["created_at"],
            questions=row["questions"],
            rows=int(row["rows"]),
            setting=json.loads(row["setting"]),
            options=json.loads(row["options"]),
        )

    def all(self) -> list[BatchRecord]:
        """Every batch, newest first."""
        with self.store.lock:
            ids = [
                r["id"] for r in self.store.db.table(BATCHES).rows_where(order_by="created_at desc")
            ]
        return [record for i in ids if (record := self.find(i)) is not None]

    def tag(self, session_id: str, batch_id: str, row_id: str) -> None:
        """Mark a session as the run of one of the batch's rows (before it starts)."""
        row = {"session_id": session_id, "batch_id": batch_id, "row_id": row_id,
               "started_at": _now()}  # fmt: skip
        with self.store.transaction():
            self.store.db.table(SESSIONS).insert(row, replace=True)

    def sessions(self, batch_id: str) -> list[dict[str, Any]]:
        """Every session the batch started, finished or not, in the order they started:
        `{"session_id", "batch_id", "row_id", "started_at"}`."""
        with self.store.lock:
            return list(
                self.store.db.table(SESSIONS).rows_where(
                    "batch_id = ?", [batch_id], order_by="rowid"
                )
            )

    def spent(self, batch_id: str) -> tuple[float, int]:
        """Dollars and tokens the batch's runs have spent, killed and cut-short runs too."""
        return spent_by_tagged(self.store, SESSIONS, "batch_id", batch_id)

    def save(self, result: RowResult) -> None:
        """Keep a finished row's result (it will not be run again on resume)."""
        row = {**result.to_row(), "finished_at": _now()}
        with self.store.transaction():
            self.store.db.table(RESULTS).insert(row, replace=True)

    def results(self, batch_id: str) -> list[RowResult]:
        """The batch's finished rows, in the order they finished."""
        with self.store.lock:
            rows = self.store.db.table(RESULTS).rows_where(
                "batch_id = ?", [batch_id], order_by="finished_at, rowid"
            )
            return [RowResult.from_row(row) for row in rows]


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")
