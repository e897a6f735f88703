"""The Presentation view (View → Presentation, F5): full screen, larger type, the tree and
console given the room, a clicker's Page Down stepping a replay's turns; leaving it puts back
everything, and nothing of it is saved as the user's choice."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rlm_desktop.engine.events import TurnExecuted
from rlm_desktop.ui.appearance.theme import monospace_font
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.tree.columns import COLUMNS
from rlm_desktop.ui.window.detail_tabs import ANSWER, CONSOLE
from rlm_desktop.ui.window.main_window import MainWindow
from tests.review.recorded_runs import TURNS
from tests.ui.test_replay import opened, recorded


def _layout(window: MainWindow) -> dict[str, object]:
    ws = window.workspace
    return {
        "points": window.zoom.points,
        "documents": ws.documents_shown(),
        "settings": ws.controls.settings_area.isVisible(),
        "tab": ws.detail_tabs.currentIndex(),
        "presenting": window.presentation.active,
        "window state": window.windowState(),
        "splitters": [s.sizes() for s in ws.splitters()],
        "columns": [ws.tree_panel.view.isColumnHidden(n) for n in range(len(COLUMNS))],
    }


def test_presenting_enlarges_the_type_and_gives_the_room_to_the_tree_and_console(
    window: MainWindow, qtbot: QtBot
) -> None:
    window.pages.setCurrentWidget(window.workspace)
    window.workspace.detail_tabs.show_tab(ANSWER)
    qtbot.wait(300)  # the page's layouts settle
    before = _layout(window)
    assert before["documents"]
    assert before["settings"]
    assert before["tab"] == ANSWER
    saved_size = window.prefs.get_int("appearance/ui_font_size")
    console_before = window.workspace.console.width()
    code_points = monospace_font().pointSize()

    window.presentation_action.trigger()
    assert window.presentation.active  # full screen, where a window manager grants it
    now = _layout(window)
    assert now["points"] > before["points"]  # type: ignore[operator]
    assert not now["documents"]
    assert not now["settings"]
    assert now["tab"] == CONSOLE  # the console shown large
    assert monospace_font().pointSize() > code_points  # the code grows with the text
    assert window.workspace.tree_panel.view.isVisible()
    view = window.workspace.tree_panel.view
    shown = [c.title for n, c in enumerate(COLUMNS) if not view.isColumnHidden(n)]
    assert shown == ["Call", "Status", "Time"]  # what an audience reads
    assert window.workspace.console.width() > console_before
    assert window.prefs.get_int("appearance/ui_font_size") == saved_size  # not the user's choice
    assert "F5" in window.statusBar().currentMessage()

    window.presentation_action.trigger()
    qtbot.wait(300)
    assert _layout(window) == before
    assert window.prefs.get_int("appearance/ui_font_size") == saved_size
    assert monospace_font().pointSize() == code_points


def test_a_window_closed_while_presenting_remembers_the_layout_from_before(
    window: MainWindow, qtbot: QtBot
) -> None:
    sizes = window.workspace.main_splitter.sizes()
    window.presentation_action.trigger()
    assert window.workspace.main_splitter.sizes()[0] == 0
    window.close()
    again = MainWindow(Preferences(), warm_up=False)
    qtbot.addWidget(again)
    try:
        assert again.workspace.documents_shown()
        assert not again.presentation.active
        assert again.workspace.main_splitter.sizes()[0] > 0
        assert sizes[0] > 0
    finally:
        again.shutdown()


def test_page_down_steps_a_replay_turn_only_while_presenting(
    window: MainWindow, qtbot: QtBot
) -> None:
    run = recorded(qtbot, TURNS)
    turn_ends = [i + 1 for i, e in enumerate(run.played) if isinstance(e, TurnExecuted)]
    ws, _clock = opened(window, run.session_id)
    player = ws.replay.player
    assert player is not None
    qtbot.mouseClick(ws.replay.bar.play_button, Qt.MouseButton.LeftButton)  # pauses at the start
    qtbot.mouseClick(ws.replay.bar.previous_turn_button, Qt.MouseButton.LeftButton)
    start = player.position
    window.activateWindow()
    ws.tree_panel.view.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_PageDown)
    assert player.position == start  # Page Down is the tree's own key outside a presentation

    window.presentation_action.trigger()
    assert ws.replay.bar.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_PageDown)
    assert player.position == next(end for end in turn_ends if end > start)
    qtbot.keyClick(window, Qt.Key.Key_PageUp)
    assert player.position <= start or player.position in turn_ends

    window.presentation_action.trigger()
    position = player.position
    qtbot.keyClick(window, Qt.Key.Key_PageDown)
    assert player.position == position
