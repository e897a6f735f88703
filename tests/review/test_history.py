"""The history of saved runs, checked against the database itself: real runs recorded by the real
engine, then each figure computed again with plain SQL and the statistics module."""

from __future__ import annotations

import sqlite3
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.review.history import Distribution, HistoryFilter, load_history
from rlm_desktop.store import Store
from tests.review.recorded import HISTORY as PLANS
from tests.review.recorded import MODELS, PRICED, record_runs
from tests.scripted_server import ScriptedServer


@pytest.fixture
async def history_db(scripted_server: ScriptedServer) -> list[str]:
    return await record_runs(scripted_server, PLANS)


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(paths.database_path())
    yield conn
    conn.close()


@pytest.fixture
def store() -> Iterator[Store]:
    opened = Store(paths.database_path())
    yield opened
    opened.close()


def _column(db: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()) -> list[float]:
    return [float(value) for (value,) in db.execute(sql, params).fetchall()]


def _check_spread(spread: Distribution | None, values: list[float]) -> None:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    assert spread is not None
    assert spread.median == pytest.approx(statistics.median(values))
    assert spread.p90 == pytest.approx(cuts[89])
    assert spread.p99 == pytest.approx(cuts[98])
    assert spread.max == pytest.approx(max(values))
    assert sum(spread.counts) == len(values)


async def test_percentiles_equal_those_of_the_database(
    history_db: list[str], store: Store, db: sqlite3.Connection
) -> None:
    history = load_history(store)
    assert sorted(run.id for run in history.runs) == sorted(history_db)
    costs = _column(db, f"SELECT cost_usd FROM sessions WHERE {PRICED}")
    walls = _column(db, "SELECT wall_s FROM sessions WHERE wall_s IS NOT NULL")
    subs = _column(db, "SELECT sub_calls FROM sessions")
    assert len(costs) == len(PLANS) - 1  # the unpriced model's run has no cost to spread
    assert len(set(costs)) == len(costs)
    assert sorted(subs) == sorted(float(plan.fan_out) for plan in PLANS)
    _check_spread(history.distributions["cost_usd"], costs)
    _check_spread(history.distributions["wall_s"], walls)
    _check_spread(history.distributions["sub_calls"], subs)
    tokens = _column(db, "SELECT input_tokens + output_tokens FROM sessions")
    _check_spread(history.distributions["tokens"], tokens)
    assert history.unpriced_runs == 1


async def test_breakdowns_and_tail_agree_with_sql(
    history_db: list[str], store: Store, db: sqlite3.Connection
) -> None:
    history = load_history(store)
    by_model = dict(db.execute(f"SELECT model, sum(cost_usd) FROM sessions WHERE {PRICED} GROUP BY model").fetchall())  # fmt: skip
    shown = {group.key: group.total for group in history.by_model() if group.measured_runs}
    assert shown == pytest.approx(by_model)
    tokens = dict(db.execute("SELECT model, sum(input_tokens + output_tokens) FROM sessions GROUP BY model").fetchall())  # fmt: skip
    assert {group.key: group.total for group in history.by_model("tokens")} == tokens
    by_profile = dict(db.execute("SELECT profile, count(*) FROM sessions GROUP BY profile").fetchall())  # fmt: skip
    assert {group.key: group.runs for group in history.by_profile()} == by_profile
    assert set(by_profile) == {"small", "local"}  # a model no pattern names, on its own server
    depth = "json_extract(settings, '$.budget.max_depth')"
    by_depth = dict(db.execute(f"SELECT {depth}, count(*) FROM sessions GROUP BY {depth}").fetchall())  # fmt: skip
    assert {int(group.key): group.runs for group in history.by_depth()} == by_depth

    costs = sorted(_column(db, f"SELECT cost_usd FROM sessions WHERE {PRICED}"))
    p90 = statistics.quantiles(costs, n=100, method="inclusive")[89]
    tail_ids = [row[0] for row in db.execute(f"SELECT id FROM sessions WHERE {PRICED} AND cost_usd >= ? ORDER BY cost_usd DESC", (p90,))]  # fmt: skip
    assert [run.id for run in history.tail("cost_usd")] == tail_ids
    assert tail_ids  # the costliest run at least


async def test_filters_by_model_profile_status_and_date(
    history_db: list[str], store: Store, db: sqlite3.Connection
) -> None:
    only_other = load_history(store, HistoryFilter(model=MODELS[1]))
    expected = _column(db, f"SELECT cost_usd FROM sessions WHERE {PRICED} AND model = ?", (MODELS[1],))  # fmt: skip
    assert len(only_other.runs) == 2
    _check_spread(only_other.distributions["cost_usd"], expected)
    assert {run.model for run in only_other.runs} == {MODELS[1]}

    small = load_history(store, HistoryFilter(profile="small"))
    assert sorted(run.sub_calls for run in small.runs) == [3, 12]
    assert len(load_history(store, HistoryFilter(status="completed")).runs) == len(PLANS)
    none = load_history(store, HistoryFilter(status="error"))
    assert none.runs == []
    assert none.distributions["cost_usd"] is None
    assert none.tail("cost_usd") == []

    starts = sorted(_column(db, "SELECT started_at FROM sessions"))
    middle = load_history(store, HistoryFilter(since=starts[2], until=starts[5]))
    assert sorted(run.started_at or 0 for run in middle.runs) == starts[2:5]
    assert middle.choices.models == sorted({*MODELS, "openai/unpriced-model"})
    assert middle.choices.statuses == ["completed"]


def test_an_empty_history_has_no_spread(isolated_home: Path, store: Store) -> None:
    history = load_history(store)
    assert history.runs == []
    assert all(spread is None for spread in history.distributions.values())
    assert history.by_model() == []
    assert history.choices.first_started is None
