"""The Health panel in the window: a reopened session shows its findings linked to their calls,
and a bar per document for what reached a model."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressBar
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.window.detail_tabs import HEALTH
from rlm_desktop.ui.window.main_window import MainWindow
from tests.review.health_runs import NOTE, recorded
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.reopened import LoopTicks, open_checked, record_filled

FAILING = repl("print(crate_total)")
FINISH = repl('FINAL("Sector 3 holds 9 crates.")')


def record(qtbot: QtBot, window: MainWindow, server: ScriptedServer, turns: list[str]) -> str:
    """A real run over the short note, recorded in the window's own store."""
    responder = scripted(root=turns)
    task = asyncio.ensure_future(
        recorded(window.starter.store(), server, responder, documents=[NOTE])
    )
    qtbot.waitUntil(task.done, timeout=60_000)
    return task.result()


def test_a_reopened_session_shows_findings_linked_to_calls(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    session_id = record(
        qtbot,
        window,
        scripted_server,
        [FAILING, FAILING, repl("print(llm_query('Count: ' + context[:520]))"), FINISH],
    )
    open_checked(window, qtbot, session_id)
    panel = window.workspace.health
    assert not panel.isHidden()
    assert window.workspace.detail_tabs.tabText(HEALTH) == "Health ⚠ 3"  # seen from any tab
    window.workspace.detail_tabs.show_tab(HEALTH)
    assert panel.isVisible()
    assert panel.report is not None
    assert panel.summary.text() == "3 warnings"
    tops = [panel.findings.topLevelItem(i) for i in range(panel.findings.topLevelItemCount())]
    texts = [item.text(0) for item in tops if item is not None]
    assert any(text.startswith("⚠ Weak coder: 2 of 4 turns (50%)") for text in texts)
    (bar,) = panel.bars.findChildren(QProgressBar)
    assert bar.format() == f"{520 / len(NOTE.text):.0%} read · {NOTE.name}"

    weak = next(item for item in tops if item is not None and "Weak coder" in item.text(0))
    advice = weak.child(0).text(0)
    assert "--" not in advice  # named as the window's fields, not the command line's flags
    evidence = weak.child(1)
    assert evidence.text(0) == "c1 turn 1"
    tree = window.workspace.model.tree
    (sub_call,) = [node for node in tree.walk() if node.parent is not None]
    window.workspace.tree_panel.select(sub_call)
    panel.findings.expandAll()
    rect = panel.findings.visualItemRect(evidence)
    qtbot.mouseClick(panel.findings.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    selected = window.workspace.tree_panel.selected()
    assert selected is not None
    assert selected.call_id == "c1"


def test_the_summary_counts_warnings_and_leaving_the_review_clears_it(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    session_id = record(qtbot, window, scripted_server, [repl("print(context)"), FINISH])
    open_checked(window, qtbot, session_id)
    panel = window.workspace.health
    assert panel.summary.text() == "1 warning"
    window.leave_review()
    assert not panel.isVisible()
    assert panel.report is None


def test_a_live_run_shows_its_health_when_it_ends(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    note = tmp_path / "note.txt"
    note.write_text(NOTE.text, encoding="utf-8")
    scripted_server.respond_with(scripted(root=[FAILING, FAILING, FINISH]))
    window.prefs.set_base_url("local", scripted_server.base_url)
    window.prefs.set_prices_text("openai/test-model = 0, 0")  # the starter's budget has a $ cap
    window.starter.apply_preferences()
    window.pages.setCurrentWidget(window.workspace)
    controls = window.workspace.controls
    controls.endpoint.setCurrentIndex(controls.endpoint.findData(scripted_server.base_url))
    controls.model.setEditText("openai/test-model")
    controls.mode.setCurrentIndex(controls.mode.findData("rlm"))
    controls.question.setPlainText("How many crates are in sector 3?")
    window.workspace.documents.add_paths([note])
    qtbot.waitUntil(lambda: not window.workspace.documents.loading, timeout=20_000)
    panel = window.workspace.health
    assert window.start_run()
    qtbot.waitUntil(lambda: panel.report is not None, timeout=60_000)
    window.workspace.detail_tabs.show_tab(HEALTH)
    assert panel.isVisible()
    assert panel.report is not None
    assert {f.rule for f in panel.report.findings} == {
        "error_share",
        "repeated_error",
        "direct_would_do",
    }


def test_opening_a_session_checks_its_health_while_the_window_stays_responsive(
    window: MainWindow, qtbot: QtBot
) -> None:
    """A session model code filled with text that quotes nothing takes the check seconds: it
    runs beside the window's event loop, which goes on turning, and shows when it is done."""
    session_id = record_filled(window)
    assert window.open_session(session_id)
    panel = window.workspace.health
    assert panel.report is None  # not checked on the window's thread
    ticks = LoopTicks()
    qtbot.waitUntil(lambda: panel.report is not None, timeout=60_000)
    ticks.stop()
    assert panel.report is not None
    assert panel.report.coverage.share == 1.0
    assert panel.report.coverage.unscanned > 0  # past the probe limit, which the panel says
    assert panel.summary.text().endswith("coverage partly checked")
    assert "not scanned" in panel.summary.toolTip()
    ticks.assert_kept_turning()
