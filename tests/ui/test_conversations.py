"""The conversations sidebar (View → Conversations): the user's questions with their follow-ups,
newest first, evaluation trials left out; choosing one opens its newest question, *New* returns
to a new run; the choice to show it survives a restart."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rlm_desktop.evaluation.records import EvaluationRecords
from rlm_desktop.ui.sessions.conversations import LATEST_ROLE
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.conversations_link import WIDE_SCREEN_PX
from rlm_desktop.ui.window.layout_memory import room_on_screen
from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import prepare
from tests.ui.test_follow_up import run_and_wait

FIRST, FOLLOW_UP, OTHER, TRIAL = (
    "Which regions are listed?",
    "And the north total doubled?",
    "How many lines are there?",
    "An evaluation's question",
)


def entries(window: MainWindow) -> list[str]:
    listing = window.workspace.conversations.list
    return [listing.item(row).text() for row in range(listing.count())]  # type: ignore[union-attr]


def test_the_sidebar_lists_threads_newest_first_and_opens_them(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.txt"
    ledger.write_text("north 12\nsouth 30\n", encoding="utf-8")
    scripted_server.respond_with(
        scripted(
            {
                FIRST: [repl("totals = {'north': 12}\nFINAL('north')")],
                FOLLOW_UP: [repl("FINAL(2 * totals['north'])")],
                OTHER: [repl("FINAL(len(context.splitlines()))")],
                TRIAL: [repl("FINAL('trial')")],
            }
        )
    )
    window.conversations_action.setChecked(True)
    pane = window.workspace.conversations
    assert not pane.empty.isHidden()  # nothing saved yet: it says what will be here

    prepare(window, qtbot, scripted_server, FIRST, [ledger])
    run_and_wait(window, qtbot)
    controls = window.workspace.controls
    qtbot.mouseClick(controls.follow_up.ask_button, Qt.MouseButton.LeftButton)
    controls.question.setPlainText(FOLLOW_UP)
    run_and_wait(window, qtbot)
    controls.follow_up.end()
    controls.question.setPlainText(TRIAL)
    run_and_wait(window, qtbot)
    trial_id = window.workspace.model.tree.run.run_id
    EvaluationRecords(window.starter.store()).tag(trial_id, "e1", "good", "t1")
    controls.question.setPlainText(OTHER)
    run_and_wait(window, qtbot)

    listed = entries(window)
    assert [line.split("\n")[0] for line in listed] == [OTHER, FIRST]  # the trial is not one
    assert listed[1].split("\n")[1].startswith("2 questions · completed · ")
    assert pane.empty.isHidden()

    item = pane.list.item(1)
    assert item is not None
    latest = item.data(LATEST_ROLE)
    pane.list.itemClicked.emit(item)
    assert window.workspace.reviewing is not None
    assert window.workspace.model.tree.run.run_id == latest
    assert window.workspace.model.tree.root is not None
    assert window.workspace.model.tree.root.prompt == FOLLOW_UP  # its newest question
    assert pane.list.currentRow() == 1

    qtbot.mouseClick(pane.new_button, Qt.MouseButton.LeftButton)
    assert window.workspace.reviewing is None
    assert pane.list.currentRow() == -1


def test_the_sidebar_stays_as_it_was_left(window: MainWindow, qtbot: QtBot) -> None:
    window.conversations_action.setChecked(True)
    window.close()
    again = MainWindow(Preferences(), warm_up=False)
    qtbot.addWidget(again)
    try:
        assert again.conversations_action.isChecked()
        assert not again.workspace.conversations.isHidden()
        again.conversations_action.setChecked(False)
        assert again.workspace.conversations.isHidden()
        assert not Preferences().get_bool("window/conversations", default=True)
    finally:
        again.shutdown()


def test_showing_the_sidebar_keeps_the_window_on_its_screen(
    window: MainWindow, qtbot: QtBot
) -> None:
    window.pages.setCurrentWidget(window.workspace)
    window.conversations_action.setChecked(False)
    qtbot.wait(100)
    window.conversations_action.setChecked(True)
    qtbot.wait(100)
    room = room_on_screen(window).width()
    assert room < WIDE_SCREEN_PX  # the offscreen screen is narrow: the two panes take turns
    assert window.minimumSizeHint().width() <= room
    assert not window.documents_action.isChecked()
    assert "documents pane is folded" in window.statusBar().currentMessage()
    assert window.workspace.documents.isHidden()

    window.documents_action.setChecked(True)  # and back: the sidebar makes way
    assert not window.workspace.documents.isHidden()
    assert not window.conversations_action.isChecked()
    assert window.workspace.conversations.isHidden()
    assert "conversations are put away" in window.statusBar().currentMessage()
