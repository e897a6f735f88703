"""Read-side SQL for the history of all saved runs: one row per session, filtered, and the
values the filters can take."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from rlm_desktop.store.queries import Row, rows, wrong_kinds

HISTORY_COLUMNS = (
    "id, query, status, model, sub_model, coalesce(profile, '') AS profile, cost_usd,"
    " coalesce(unpriced, 0) AS unpriced, wall_s, coalesce(sub_calls, 0) AS sub_calls,"
    " coalesce(turns, 0) AS turns, coalesce(input_tokens, 0) AS input_tokens,"
    " coalesce(output_tokens, 0) AS output_tokens,"
    " coalesce(max_depth_reached, 0) AS max_depth_reached, started_at,"
    " CASE WHEN json_valid(settings)"
    " THEN CAST(json_extract(settings, '$.budget.max_depth') AS INTEGER) END AS max_depth"
)


@dataclass(frozen=True)
class HistoryFilter:
    """Which saved runs a history covers; a field left `None` does not filter.

    `since` and `until` are Unix timestamps (a run counts when it started in `[since, until)`);
    `model` is the run's (root) model, `profile` its prompt profile, `status` its final status.
    """

    since: float | None = None
    until: float | None = None
    model: str | None = None
    profile: str | None = None
    status: str | None = None

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition on `sessions` and its parameters ("" for no filter)."""
        terms: list[str] = []
        params: list[Any] = []
        for column, op, value in (
            ("started_at", ">=", self.since),
            ("started_at", "<", self.until),
            ("model", "=", self.model),
            ("coalesce(profile, '')", "=", self.profile),
            ("status", "=", self.status),
        ):
            if value is not None:
                terms.append(f"{column} {op} ?")
                params.append(value)
        return (f"WHERE {' AND '.join(terms)}" if terms else ""), params


def history_rows(conn: sqlite3.Connection, only: HistoryFilter) -> list[Row]:
    """One row per saved session that `only` lets through, oldest first; a session whose row
    holds a value of the wrong kind (a shared or hand-made database) is left out."""
    where, params = only.where()
    found = rows(
        conn, f"SELECT {HISTORY_COLUMNS} FROM sessions {where} ORDER BY started_at", params
    )
    sound = [row for row in found if not wrong_kinds(row)]
    for row in sound:
        row["unpriced"] = bool(row["unpriced"])
    return sound


@dataclass(frozen=True)
class FilterChoices:
    """The values the history's filters can take, from what is saved."""

    models: list[str]
    profiles: list[str]
    statuses: list[str]
    first_started: float | None
    last_started: float | None


def filter_choices(conn: sqlite3.Connection) -> FilterChoices:
    """Every model, profile and status saved runs have, and the span of their start times."""

    def distinct(expression: str) -> list[str]:
        found = conn.execute(
            f"SELECT DISTINCT {expression} AS v FROM sessions WHERE v IS NOT NULL ORDER BY v"
        ).fetchall()
        return [str(value) for (value,) in found]

    first, last = conn.execute("SELECT min(started_at), max(started_at) FROM sessions").fetchone()
    return FilterChoices(
        models=distinct("model"),
        profiles=distinct("coalesce(profile, '')"),
        statuses=distinct("status"),
        first_started=first,
        last_started=last,
    )
