"""The main window without the engine: pages, hand-built event streams, settings, layout."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop import keys
from rlm_desktop.ui.main_window import MainWindow
from rlm_desktop.ui.preferences import Preferences
from tests.ui.synthetic import synthetic_run


def test_first_run_shows_the_welcome_page(window: MainWindow) -> None:
    assert window.pages.currentWidget() is window.welcome
    assert window.windowTitle() == "RLM Desktop"
    assert not window.windowIcon().isNull()


def test_a_saved_key_skips_the_welcome_page(qtbot: QtBot, qloop: object,
                                            memory_keyring: object) -> None:
    keys.set_key("openai", "sk-test")
    win = MainWindow(warm_up=False)
    qtbot.addWidget(win)
    assert win.pages.currentWidget() is win.workspace
    win.shutdown()


def test_event_stream_fills_tree_console_status_and_answer(window: MainWindow,
                                                           qtbot: QtBot) -> None:
    window.pages.setCurrentWidget(window.workspace)
    ws = window.workspace
    for event in synthetic_run(fanout=4):
        ws.bridge.push(event)
    qtbot.waitUntil(lambda: ws.answer.isVisible(), timeout=3000)
    assert ws.model.rowCount() == 1
    assert ws.tree_panel.selected() is ws.model.tree.root
    assert len(ws.console.cell_views()) == 1
    assert "42" in ws.answer.text.toPlainText()
    assert "6 done" in window.status.calls.text()
    assert ws.details.prompt.toPlainText() == "What is this about?"


def test_run_without_documents_says_how_to_fix_it(window: MainWindow) -> None:
    keys.set_key("openai", "sk-test")
    window.pages.setCurrentWidget(window.workspace)
    ws = window.workspace
    ws.controls.question.setPlainText("What?")
    window.start_run()
    assert not ws.controls.error.isHidden()
    assert "Add at least one document" in ws.controls.error.text()


def test_run_without_a_key_names_the_settings_page(window: MainWindow) -> None:
    window.pages.setCurrentWidget(window.workspace)
    ws = window.workspace
    ws.controls.question.setPlainText("What?")
    ws.controls.model.setEditText("anthropic/claude-haiku-4-5")
    window.start_run()
    ws.documents.model.add([], [])
    assert "Add at least one document" in ws.controls.error.text()


def test_layout_is_remembered(qtbot: QtBot, qloop: object, memory_keyring: object) -> None:
    win = MainWindow(warm_up=False)
    qtbot.addWidget(win)
    win.show()
    win.workspace.main_splitter.setSizes([200, 1200])
    sizes = win.workspace.main_splitter.sizes()
    win.close()
    again = MainWindow(warm_up=False)
    qtbot.addWidget(again)
    again.show()
    assert again.workspace.main_splitter.sizes() == sizes
    assert Preferences().window_state("geometry") is not None
    again.shutdown()
