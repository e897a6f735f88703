"""The window laid out around the run (`docs/layout.md`): the detail pane's tab follows what the
user does, the settings fold when a run starts, the answer reads before its figures, and every
step of a run can be reached from the keyboard."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from rlm_desktop.engine.run import RunResult
from rlm_desktop.providers import keys
from rlm_desktop.review.timeline import layout
from rlm_desktop.ui.appearance.theme import LARGEST_POINTS, apply_fonts
from rlm_desktop.ui.run.starter import ended_and_saved
from rlm_desktop.ui.timeline.view import TimelineView, label_step, row_labels
from rlm_desktop.ui.window.detail_tabs import ANSWER, CALL, CONSOLE, HEALTH, TIMELINE
from rlm_desktop.ui.window.main_window import MainWindow
from tests.qt_fixtures import opened_window
from tests.review.recorded_runs import FANOUT
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.synthetic import synthetic_run
from tests.ui.test_compare_window import _record_lasting
from tests.ui.test_end_to_end import prepare
from tests.ui.test_follow_up import run_and_wait
from tests.ui.test_timeline import recorded, timeline_of


def _streamed(window: MainWindow, qtbot: QtBot) -> None:
    """A hand-built run of a root and four sub-calls, streamed into the window to its end."""
    window.pages.setCurrentWidget(window.workspace)
    ws = window.workspace
    ws.begin_view(None)
    for event in synthetic_run(fanout=4):
        ws.bridge.push(event)
    qtbot.waitUntil(lambda: not ws.answer.isHidden(), timeout=3000)


def _click_call(window: MainWindow, qtbot: QtBot, row: int) -> None:
    """Click the tree's `row`-th child of the root, as a user does."""
    panel = window.workspace.tree_panel
    view = panel.view
    view.expandAll()
    index = view.model().index(row, 0, view.model().index(0, 0))
    rect = view.visualRect(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_the_tab_follows_the_run_and_the_users_choices(window: MainWindow, qtbot: QtBot) -> None:
    window.resize(1024, 640)
    tabs = window.workspace.detail_tabs
    window.workspace.begin_view(None)
    assert tabs.currentIndex() == CONSOLE  # a run starting shows what the model does
    _streamed(window, qtbot)
    assert tabs.currentIndex() == ANSWER  # a run ending shows its answer
    assert window.workspace.answer.isVisible()

    _click_call(window, qtbot, 1)
    assert tabs.currentIndex() == CONSOLE  # a call chosen from the answer: its console
    chosen = window.workspace.tree_panel.selected()
    assert chosen is not None
    assert chosen.parent is not None
    assert window.workspace.console.node is chosen

    tabs.show_tab(CALL)
    _click_call(window, qtbot, 2)
    assert tabs.currentIndex() == CALL  # comparing calls' prompts: the tab stays
    assert window.workspace.details.node is window.workspace.tree_panel.selected()


def test_the_console_and_the_answer_each_get_the_run_areas_height(
    window: MainWindow, qtbot: QtBot
) -> None:
    window.resize(1024, 640)
    window.show()
    _streamed(window, qtbot)
    ws = window.workspace
    qtbot.wait(50)
    area = ws.run_splitter.height()
    assert ws.answer.text.verticalScrollBar().maximum() == 0  # a short answer shows whole
    card = ws.answer
    assert card.text.geometry().top() < card.stats.geometry().top()  # the answer, then figures
    ws.detail_tabs.show_tab(CONSOLE)
    qtbot.wait(50)
    assert ws.console.height() >= 0.8 * area


def test_ctrl_t_shows_the_timeline_and_goes_back(window: MainWindow, qtbot: QtBot) -> None:
    _streamed(window, qtbot)
    tabs = window.workspace.detail_tabs
    assert tabs.currentIndex() == ANSWER
    window.timeline_action.trigger()
    assert tabs.currentIndex() == TIMELINE
    assert window.timeline_action.isChecked()
    window.timeline_action.trigger()
    assert tabs.currentIndex() == ANSWER  # back to where it was opened from
    assert not window.timeline_action.isChecked()
    tabs.show_tab(TIMELINE)
    assert window.timeline_action.isChecked()  # the mark follows the tab however it was chosen


def test_keyboard_reaches_every_step_of_a_run(window: MainWindow, qtbot: QtBot) -> None:
    window.show()
    window.pages.setCurrentWidget(window.workspace)
    window.activateWindow()
    qtbot.waitUntil(lambda: window.isActiveWindow())
    controls = window.workspace.controls
    window.focus_question()
    assert QApplication.focusWidget() is controls.question

    seen = []
    widget = QApplication.focusWidget()
    for _ in range(40):
        qtbot.keyClick(widget, Qt.Key.Key_Tab)
        widget = QApplication.focusWidget()
        seen.append(widget)
    assert controls.settings_line.toggle in seen
    assert controls.budget.toggle in seen  # the budget is in the Tab order
    assert controls.model in seen

    _streamed(window, qtbot)
    for number, tab in enumerate((ANSWER, CONSOLE, CALL, HEALTH, TIMELINE), start=1):
        qtbot.keyClick(window, Qt.Key.Key_0 + number, Qt.KeyboardModifier.ControlModifier)
        assert window.workspace.detail_tabs.currentIndex() == tab

    QGuiApplication.clipboard().clear()
    qtbot.keyClick(
        window,
        Qt.Key.Key_A,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert "42" in QGuiApplication.clipboard().text()

    window.workspace.tree_panel.view.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is controls.question

    controls.question.setPlainText("an old question")
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert controls.question.toPlainText() == ""
    assert QApplication.focusWidget() is controls.question


def test_the_question_has_the_focus_when_the_window_opens(
    qtbot: QtBot, qloop: object, memory_keyring: object
) -> None:
    keys.set_key("openai", "sk-test")
    with opened_window(qtbot) as window:
        assert window.pages.currentWidget() is window.workspace
        window.activateWindow()
        question = window.workspace.controls.question
        qtbot.waitUntil(lambda: QApplication.focusWidget() is question)


def test_the_question_has_the_focus_once_past_the_welcome_page(
    window: MainWindow, qtbot: QtBot
) -> None:
    assert window.pages.currentWidget() is window.welcome
    window.activateWindow()
    window.welcome.skip.emit()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.workspace.controls.question)


def test_a_run_folds_the_settings_into_a_sentence_and_one_click_opens_them(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    note = tmp_path / "note.txt"
    note.write_text("Sector 3 holds 9 crates.\n", encoding="utf-8")
    scripted_server.respond_with(scripted(root=[repl('FINAL("9 crates")')]))
    prepare(window, qtbot, scripted_server, "How many crates?", [note])
    controls = window.workspace.controls
    window.show()
    assert controls.settings_line.is_open
    assert controls.model.isVisible()
    run_and_wait(window, qtbot)
    assert not controls.settings_line.is_open  # the run gets the height
    assert not controls.model.isVisible()
    summary = controls.settings_line.summary
    assert summary.isVisible()
    assert "openai/test-model" in summary.text()
    assert "depth 2" in summary.text()
    qtbot.mouseClick(controls.settings_line.toggle, Qt.MouseButton.LeftButton)
    assert controls.model.isVisible()


def test_a_changed_setting_shows_in_the_folded_sentence(window: MainWindow) -> None:
    controls = window.workspace.controls
    controls.settings_line.set_open(False)
    controls.max_depth.setValue(4)
    controls.model.setEditText("openai/another-model")
    assert "depth 4" in controls.settings_line.summary.text()
    assert "openai/another-model" in controls.settings_line.summary.text()


def test_row_labels_never_print_over_each_other() -> None:
    assert label_step(10, 400, 16) == 1  # 40 px a row: every row
    assert label_step(100, 400, 16) == 4  # 4 px a row: every 4th
    assert label_step(0, 400, 16) == 1
    assert label_step(50, 0, 16) == 1


def test_a_short_timeline_labels_every_nth_row_a_line_apart(
    window: MainWindow, qtbot: QtBot
) -> None:
    """At 2× with a large type the c1…c9 labels printed over each other."""
    fan_out = recorded(qtbot, FANOUT)
    ws, view = timeline_of(window, qtbot, fan_out.session_id)
    short = TimelineView()
    qtbot.addWidget(short)
    short.resize(400, 90)
    short.show()
    short.show_timeline(layout(ws.model.tree))
    qtbot.wait(50)
    ticks = short.rows_axis._tickLevels
    assert ticks is not None
    rows = [row for row, _label in ticks[0]]
    line = short.fontMetrics().height()
    _times, (top, bottom) = short.box.viewRange()
    pixels_per_row = short.box.height() / (bottom - top)
    assert len(rows) < len(ws.model.tree)
    assert all((b - a) * pixels_per_row >= line for a, b in zip(rows, rows[1:], strict=False))
    assert len(row_labels(view.timeline)) == len(ws.model.tree)  # a tall one labels them all


def test_at_the_largest_type_the_window_can_still_be_as_small_as_its_screen(
    window: MainWindow, qtbot: QtBot
) -> None:
    """The run's figures in the status bar and the panes' least sizes at 32 pt are wider than a
    1280-pixel screen: the window's own least width stays within it, its pages scroll."""
    _streamed(window, qtbot)
    window.status.update_from(window.workspace.model.tree)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = window.zoom.points
    try:
        apply_fonts(app, "", LARGEST_POINTS, "", 0)
        for _ in range(3):
            app.processEvents()
        assert window.least_size().width() > 1280  # everything unscrolled would not fit
        assert window.minimumSizeHint().width() <= 1280  # yet the window can
    finally:
        apply_fonts(app, "", before, "", 0)


def test_a_new_question_from_a_saved_session_puts_its_replay_away(
    window: MainWindow, qtbot: QtBot
) -> None:
    """Ctrl+N from a saved session had left its replay bar live: Play then replayed the old run
    under the new question."""
    _record_lasting("left-by-ctrl-n", 3.0, 1_700_000_000.0)
    window.show()
    assert window.open_session("left-by-ctrl-n")
    ws = window.workspace
    assert ws.replay.bar.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert ws.reviewing is None
    assert ws.replay.player is None
    assert not ws.replay.bar.isVisible()
    assert ws.model.tree.root is None


def test_a_run_that_was_stopped_is_not_said_to_have_finished() -> None:
    assert ended_and_saved(None) == "Run ended (error) and saved."
    ended = {
        "answer": "", "cost_usd": 0.0, "input_tokens": 0, "output_tokens": 0, "turns": 1,
        "sub_calls": 0, "max_depth_reached": 1, "wall_s": 1.0, "unpriced": False,
    }  # fmt: skip
    stopped = RunResult(status="cancelled", session_id="s", **ended)
    assert ended_and_saved(stopped) == "Run stopped and saved."
    failed = RunResult(status="error", session_id="s", **ended)
    assert ended_and_saved(failed).startswith("Run ended (")
    assert ended_and_saved(RunResult(status="completed", session_id="s", **ended)) == (
        "Run finished and saved."
    )
