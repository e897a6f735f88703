"""The conversations the sidebar lists, read from a real store: a damaged settings text costs
nothing, an evaluation trial is left out."""

from __future__ import annotations

import sqlite3

from rlm_desktop.paths import database_path
from rlm_desktop.store import Store
from rlm_desktop.store.threads import conversations
from tests.review.recorded_runs import FANOUT, TURNS, record


async def test_a_session_with_damaged_settings_is_still_listed() -> None:
    first = await record(FANOUT)
    second = await record(TURNS)
    with sqlite3.connect(database_path()) as db:
        db.execute("UPDATE sessions SET settings = '{not json' WHERE id = ?", [first.session_id])
        db.execute(
            "UPDATE sessions SET settings = json_set(settings, '$.evaluation_id', 'e1')"
            " WHERE id = ?",
            [second.session_id],
        )
    store = Store(database_path())
    try:
        listed = conversations(store)
    finally:
        store.close()
    assert [c.latest_id for c in listed] == [first.session_id]  # the trial is not listed
    assert listed[0].title == FANOUT.query
    assert listed[0].questions == 1
