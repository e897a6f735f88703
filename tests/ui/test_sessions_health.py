"""The session list's health column and its "runs with findings" filter, over runs the real
engine recorded against the scripted server."""

from __future__ import annotations

import asyncio

from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.review.health import session_health
from rlm_desktop.store import Store
from rlm_desktop.ui.sessions.dialog import HEALTH, ID_ROLE, SessionsDialog
from rlm_desktop.ui.window.main_window import MainWindow
from tests.review.health_runs import recorded
from tests.scripted_rlm import Responder, repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.reopened import LoopTicks, record_filled

FINISH = repl('FINAL("The warehouse holds 120,345 crates.")', "Done.")
BATCHED = repl(
    "chunks = [context[i:i + 50000] for i in range(0, len(context), 50000)]\n"
    "counts = llm_query_batched([f'Count the crates in: {chunk}' for chunk in chunks])\n"
    "print(counts)"
)
FAILING = repl("print(crate_total)")


def _record(qtbot: QtBot, window: MainWindow, server: ScriptedServer, responder: Responder) -> str:
    """A real run over the warehouse ledger, recorded in the window's own store on its loop."""
    task = asyncio.ensure_future(recorded(window.starter.store(), server, responder))
    qtbot.waitUntil(task.done, timeout=60_000)
    return task.result()


def _health_cells(dialog: SessionsDialog) -> dict[str, str]:
    cells = {}
    for r in range(dialog.table.rowCount()):
        item = dialog.table.item(r, HEALTH)
        assert item is not None
        cells[item.data(ID_ROLE)] = item.text()
    return cells


def _visible(dialog: SessionsDialog) -> set[str]:
    return {
        dialog.table.item(r, HEALTH).data(ID_ROLE)  # type: ignore[union-attr]
        for r in range(dialog.table.rowCount())
        if not dialog.table.isRowHidden(r)
    }


def test_the_list_shows_each_runs_findings_and_filters_the_clean_ones(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    healthy = scripted(root=[BATCHED, FINISH], sub="About 40,000 crates.")
    weak = scripted(root=[FAILING, FAILING, FAILING, FINISH])
    runs = {
        "healthy": _record(qtbot, window, scripted_server, healthy),
        "weak": _record(qtbot, window, scripted_server, weak),
    }
    store = Store(paths.database_path())
    try:
        expected = {
            session_id: str(len(report.findings)) if report.findings else "—"
            for session_id in runs.values()
            for report in [session_health(store, session_id)]
        }
    finally:
        store.close()
    assert expected[runs["healthy"]] == "—"
    assert expected[runs["weak"]] != "—"

    dialog = window.show_sessions()
    qtbot.waitUntil(lambda: "…" not in _health_cells(dialog).values(), timeout=20_000)
    assert _health_cells(dialog) == expected
    dialog.only_findings.setChecked(True)
    assert _visible(dialog) == {runs["weak"]}
    dialog.only_findings.setChecked(False)
    assert _visible(dialog) == set(runs.values())
    dialog.reject()

    again = window.show_sessions()  # remembered: no wait the second time
    assert _health_cells(again) == expected


def test_the_list_tallies_a_session_model_code_filled_beside_the_window_s_loop(
    window: MainWindow, qtbot: QtBot
) -> None:
    """A run whose model code sent megabytes that quote nothing takes seconds to check: the
    list's loop goes on turning meanwhile, and the cell fills in when the check is done."""
    session_id = record_filled(window)
    dialog = window.show_sessions()
    assert _health_cells(dialog) == {session_id: "…"}  # not checked on the window's thread
    ticks = LoopTicks()
    qtbot.waitUntil(lambda: _health_cells(dialog) != {session_id: "…"}, timeout=60_000)
    ticks.stop()
    assert _health_cells(dialog) == {session_id: "—"}  # checked: no finding
    ticks.assert_kept_turning()
