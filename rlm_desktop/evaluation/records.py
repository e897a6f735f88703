"""Evaluations in the sessions database: their description, which session ran which trial, and
each finished trial's result. The tables are this package's own, made here with sqlite-utils
(the store's migrations do not know them); every run stays a normal session of the store."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rlm_desktop.evaluation.trial import SOURCE_COUNTS, TrialResult

if TYPE_CHECKING:
    from rlm_desktop.store import Store

EVALUATIONS, SESSIONS, RESULTS = "evaluations", "evaluation_sessions", "evaluation_results"
LATER_COLUMNS: dict[str, type] = {
    **dict.fromkeys(SOURCE_COUNTS, int),
    "source_score": float,
    "executor": str,
    "node": str,
    "attempts": int,
}
"""Result columns added after the table first shipped: added to an older database on open
(its rows read them as 0, their source score as not applicable, and as run here once)."""


@dataclass(frozen=True)
class EvaluationRecord:
    """What an evaluation was asked to do, enough to generate it again and resume it."""

    id: str
    created_at: str
    spec: dict[str, Any]
    settings: list[dict[str, Any]]
    options: dict[str, Any]


class EvaluationRecords:
    """Reads and writes the evaluation tables through a `Store` (under its lock)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        with store.transaction():
            db = store.db
            db.table(EVALUATIONS).create(
                {"id": str, "created_at": str, "spec": str, "settings": str, "options": str},
                pk="id",
                if_not_exists=True,
            )
            db.table(SESSIONS).create(
                {"session_id": str, "evaluation_id": str, "setting": str, "task_id": str},
                pk="session_id",
                if_not_exists=True,
            )
            db.table(RESULTS).create(
                {
                    "evaluation_id": str,
                    "setting": str,
                    "task_id": str,
                    "kind": str,
                    "length": int,
                    "session_id": str,
                    "status": str,
                    "score": float,
                    "cost_usd": float,
                    "input_tokens": int,
                    "output_tokens": int,
                    "wall_s": float,
                    "sub_calls": int,
                    "unpriced": int,
                    "answer": str,
                    "gold": str,
                    "error": str,
                    "finished_at": str,
                    **LATER_COLUMNS,
                },  # fmt: skip
                pk=("evaluation_id", "setting", "task_id"),
                if_not_exists=True,
            )
            results = db.table(RESULTS)
            for name, kind in LATER_COLUMNS.items():
                if name not in results.columns_dict:
                    results.add_column(name, kind)
            db.execute(
                f"CREATE INDEX IF NOT EXISTS {SESSIONS}_by_evaluation ON {SESSIONS}(evaluation_id)"
            )

    def create(
        self,
        evaluation_id: str,
        spec: dict[str, Any],
        settings: list[dict[str, Any]],
        options: dict[str, Any],
    ) -> None:
        """Record a new evaluation."""
        row = {
            "id": evaluation_id,
            "created_at": datetime.now().astimezone().isoformat(timespec="seconds"),
            "spec": json.dumps(spec),
            "settings": json.dumps(settings),
            "options": json.dumps(options),
        }
        with self.store.transaction():
            self.store.db.table(EVALUATIONS).insert(row)

    def update_options(self, evaluation_id: str, options: dict[str, Any]) -> None:
        """Replace an evaluation's options (a resume that raises the budget, say)."""
        with self.store.transaction():
            self.store.db.table(EVALUATIONS).update(evaluation_id, {"options": json.dumps(options)})

    def find(self, evaluation_id: str) -> EvaluationRecord | None:
        """The evaluation with this id, or None."""
        with self.store.lock:
            rows = list(self.store.db.table(EVALUATIONS).rows_where("id = ?", [evaluation_id]))
        if not rows:
            return None
        row = rows[0]
        return EvaluationRecord(
            id=row["id"],
            created_at=row["created_at"],
            spec=json.loads(row["spec"]),
            settings=json.loads(row["settings"]),
            options=json.loads(row["options"]),
        )

    def all(self) -> list[EvaluationRecord]:
        """Every evaluation, newest first: in the order they were recorded, since their times
        are to the second and two begun within one would otherwise come in either order."""
        with self.store.lock:
            ids = [
                r["id"] for r in self.store.db.table(EVALUATIONS).rows_where(order_by="rowid desc")
            ]
        return [record for i in ids if (record := self.find(i)) is not None]

    def tag(self, session_id: str, evaluation_id: str, setting: str, task_id: str) -> None:
        """Mark a session as one of the evaluation's runs (before it starts)."""
        row = {"session_id": session_id, "evaluation_id": evaluation_id, "setting": setting,
               "task_id": task_id}  # fmt: skip
        with self.store.transaction():
            self.store.db.table(SESSIONS).insert(row, replace=True)

    def sessions(self, evaluation_id: str) -> list[dict[str, Any]]:
        """Every session the evaluation started, finished or not."""
        with self.store.lock:
            return list(
                self.store.db.table(SESSIONS).rows_where("evaluation_id = ?", [evaluation_id])
            )

    def spent(self, evaluation_id: str) -> tuple[float, int]:
        """Dollars and tokens the evaluation's runs have spent, read from their recorded
        requests: runs cut short or killed count too."""
        return spent_by_tagged(self.store, SESSIONS, "evaluation_id", evaluation_id)

    def save(self, result: TrialResult) -> None:
        """Keep a finished trial's result (it will not be run again on resume)."""
        row = {
            **result.to_json(),
            "unpriced": int(result.unpriced),
            "finished_at": datetime.now().astimezone().isoformat(timespec="seconds"),
        }
        with self.store.transaction():
            self.store.db.table(RESULTS).insert(row, replace=True)

    def results(self, evaluation_id: str) -> list[TrialResult]:
        """The evaluation's finished trials, in the order they finished."""
        with self.store.lock:
            rows = self.store.db.table(RESULTS).rows_where(
                "evaluation_id = ?", [evaluation_id], order_by="finished_at, rowid"
            )
            return [TrialResult.from_row(row) for row in rows]


def spent_by_tagged(store: Store, tags: str, column: str, value: str) -> tuple[float, int]:
    """Dollars and tokens spent by the sessions that table `tags` tags with `column` = `value`
    (an evaluation's, a batch's), read from their recorded requests: runs cut short or killed
    count too."""
    with store.lock:
        row = store.db.execute(
            "SELECT COALESCE(SUM(r.cost_usd), 0), "
            "COALESCE(SUM(r.input_tokens + r.output_tokens), 0) "
            f"FROM llm_requests r JOIN {tags} t ON t.session_id = r.session_id "
            f"WHERE t.{column} = ?",
            [value],
        ).fetchone()
    return float(row[0]), int(row[1])
