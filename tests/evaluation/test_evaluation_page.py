"""The evaluation page, offscreen, against the scripted server: reached from the File menu, it
runs two settings with a progress bar each and the spend against the budget, plots score
against cost, stops and resumes, and opens a run in the main view with a double-click."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rlm_desktop import formatting as fmt
from rlm_desktop.evaluation.runner import TrialFinished
from rlm_desktop.evaluation.task_sets import TaskSpec, generate
from rlm_desktop.ui.evaluation.dialog import EvaluationDialog
from rlm_desktop.ui.evaluation.results import RUN_COLUMNS
from rlm_desktop.ui.window.main_window import MainWindow
from tests.evaluation.scripting import MODELS, fill_form, responder
from tests.qt_fixtures import qloop as qloop
from tests.qt_fixtures import window as window
from tests.scripted_server import ScriptedServer

SPEC = TaskSpec(kinds=("needle",), lengths=(200,), seed=4, count=2)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    server = ScriptedServer(models=MODELS, latency_s=0.2).start()
    server.respond_with(responder(generate(SPEC)))
    yield server
    server.stop()


def test_evaluate_stop_resume_plot_and_open_a_run(
    window: MainWindow, server: ScriptedServer, qtbot: QtBot
) -> None:
    assert window.evaluation_action in window.menuBar().actions()[0].menu().actions()
    window.evaluation_action.trigger()
    dialog = window.findChild(EvaluationDialog)
    assert dialog is not None
    qtbot.waitExposed(dialog)
    fill_form(dialog, server, SPEC)

    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.evaluation is not None, timeout=30_000)  # after the check
    assert dialog.evaluation is not None
    stops: list[str] = []

    def stop_once(event: object) -> None:
        if isinstance(event, TrialFinished) and not stops:
            stops.append(event.result.task_id)
            dialog.stop()

    dialog.evaluation.add_listener(stop_once)
    qtbot.waitUntil(lambda: not dialog.running, timeout=120_000)
    assert dialog.start_button.text() == "&Resume"
    done_before = sum(bar.value() for bar in dialog.bars.values())
    assert 1 <= done_before < 4

    assert dialog.start()  # resumes the same evaluation
    qtbot.waitUntil(lambda: not dialog.running, timeout=120_000)
    assert {name: bar.value() for name, bar in dialog.bars.items()} == {"good": 2, "bad": 2}
    assert dialog.runs.rowCount() == 4
    assert dialog.summary.rowCount() == 2
    assert dialog.plot.points["good"][1] == 1.0
    assert dialog.plot.points["bad"][1] == 0.0
    assert dialog.plot.points["good"][0] > 0
    dialog.tabs.setCurrentWidget(dialog.plot)
    assert not dialog.plot.plot.grab().isNull()  # drawn: its interval bars once killed the app
    assert "of $5.00" in dialog.spend.text()
    assert "bootstrap" in dialog.footer.text()
    assert "complete" in dialog.message.text()

    rect = dialog.runs.visualItemRect(dialog.runs.item(0, 0))
    session_id = dialog.runs.item(0, RUN_COLUMNS.index("session")).text()
    qtbot.mouseClick(dialog.runs.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(dialog.runs.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.workspace.reviewing is not None)
    assert fmt.short_session_id(session_id) in (window.workspace.reviewing or "")
    dialog.close()


def test_a_wrong_form_says_what_to_fix(window: MainWindow, qtbot: QtBot) -> None:
    dialog = window.show_evaluation()
    qtbot.waitExposed(dialog)
    dialog.form.lengths.setText("4000, lots")
    assert not dialog.start()
    assert dialog.message.text() == "Lengths must be whole numbers separated by commas"
    dialog.form.lengths.setText("4000")
    dialog.form.settings.setPlainText("model=openai/x,speed=fast")
    assert not dialog.start()
    assert "is not understood" in dialog.message.text()
    assert dialog.evaluation is None
    dialog.close()


def test_closing_the_page_mid_run_stops_it_and_keeps_what_finished(
    window: MainWindow, server: ScriptedServer, qtbot: QtBot
) -> None:
    dialog = window.show_evaluation()
    qtbot.waitExposed(dialog)
    fill_form(dialog, server, SPEC)
    assert dialog.start()
    qtbot.waitUntil(lambda: dialog.evaluation is not None, timeout=30_000)  # after the check
    evaluation, task = dialog.evaluation, dialog.task
    assert evaluation is not None
    assert task is not None
    qtbot.waitUntil(lambda: len(evaluation.results()) >= 1, timeout=120_000)
    dialog.close()
    qtbot.waitUntil(task.done, timeout=60_000)
    assert evaluation.cancelled
    assert task.exception() is None
    assert 1 <= len(evaluation.results()) < 4
    assert len(evaluation.pending()) == 4 - len(evaluation.results())


def test_a_setting_that_cannot_run_is_one_line_and_nothing_is_recorded(
    window: MainWindow, qtbot: QtBot
) -> None:
    dialog = window.show_evaluation()
    qtbot.waitExposed(dialog)
    dialog.form.settings.setPlainText("a:model=openai/gpt-5-mini,mode=direct")
    assert dialog.start()
    qtbot.waitUntil(lambda: not dialog.running, timeout=60_000)
    assert dialog.message.text().startswith("Not started: ")
    assert "OPENAI_API_KEY" in dialog.message.text() or "key" in dialog.message.text()
    assert dialog.evaluation is None
    assert dialog.start_button.isEnabled()
    assert dialog.runs.rowCount() == 0
    dialog.close()
