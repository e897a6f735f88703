"""The main window without the engine: pages, hand-built event streams, settings, layout."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QShortcut
from pytestqt.qtbot import QtBot

from rlm_desktop.documents.memory_room import LIMIT_ENV
from rlm_desktop.paths import resource
from rlm_desktop.providers import keys, registry
from rlm_desktop.ui.settings.dialog import SettingsDialog
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.shared.widgets import SCREEN_SHARE
from rlm_desktop.ui.window.main_window import MainWindow
from tests.synthetic_events import failed_call
from tests.ui.synthetic import rlm_call_start, synthetic_run


def test_first_run_shows_the_welcome_page(
    qtbot: QtBot, qloop: object, memory_keyring: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    for provider in registry.PROVIDERS.values():
        if provider.env_var:
            monkeypatch.delenv(provider.env_var, raising=False)
    window = MainWindow(warm_up=False)
    qtbot.addWidget(window)
    assert window.pages.currentWidget() is window.welcome
    assert window.statusBar().isHidden()
    assert window.windowTitle() == "RLM Desktop"
    assert not window.windowIcon().isNull()
    window.welcome.sample_button.click()
    assert window.pages.currentWidget() is window.workspace
    qtbot.waitUntil(lambda: not window.workspace.documents.loading, timeout=20_000)
    assert [d.name for d in window.workspace.documents.documents()] == ["server.log"]
    assert "incidents" in window.workspace.controls.question.toPlainText()
    window.shutdown()


def test_a_saved_key_skips_the_welcome_page(
    qtbot: QtBot, qloop: object, memory_keyring: object
) -> None:
    keys.set_key("openai", "sk-test")
    win = MainWindow(warm_up=False)
    qtbot.addWidget(win)
    assert win.pages.currentWidget() is win.workspace
    win.shutdown()


def test_event_stream_fills_tree_console_status_and_answer(
    window: MainWindow, qtbot: QtBot
) -> None:
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


def test_folders_added_one_at_a_time_are_weighed_together_before_a_run(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each folder is within the memory limit on its own; a run of both is not, and is refused
    in one line before it starts, the list kept as it was."""
    keys.set_key("openai", "sk-test")
    monkeypatch.setenv(LIMIT_ENV, "2")
    window.pages.setCurrentWidget(window.workspace)
    ws = window.workspace
    for name in ("north", "south"):
        folder = tmp_path / name
        folder.mkdir()
        for number in range(14):
            (folder / f"report-{number:02}.txt").write_text("y" * 100_000 + "\n")
        ws.documents.add_paths([folder])
        qtbot.waitUntil(lambda: not ws.documents.loading, timeout=20_000)
    assert len(ws.documents.documents()) == 28
    ws.controls.question.setPlainText("What?")
    assert not window.start_run()
    assert not window.starter.running
    assert ws.controls.error.text() == (
        "The documents hold 2.7 MB of text together, over the 2.0 MB limit (set by "
        f"{LIMIT_ENV}=2); remove some documents, run it on a machine with more memory, or set "
        f"{LIMIT_ENV} to another limit."
    )
    assert len(ws.documents.documents()) == 28


def test_run_without_a_key_names_the_settings_page(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    window.pages.setCurrentWidget(window.workspace)
    ws = window.workspace
    ws.documents.add_paths([resource("samples", "server.log")])
    qtbot.waitUntil(lambda: not ws.documents.loading, timeout=20_000)
    ws.controls.question.setPlainText("What?")
    ws.controls.model.setEditText("anthropic/claude-haiku-4-5")
    assert window.start_run()
    qtbot.waitUntil(lambda: not window.starter.running, timeout=10_000)
    assert window.workspace.model.tree.root is None
    message = ws.controls.error.text()
    assert message == (
        "No API key for Anthropic: add one in Settings → Providers (Ctrl+,), "
        "or set ANTHROPIC_API_KEY."
    )
    assert ws.controls.run_button.isEnabled()
    ws.controls.fix_button.click()
    dialog = window.findChild(SettingsDialog)
    assert dialog is not None
    assert dialog.isVisible()
    assert dialog.tabs.currentWidget() is dialog.providers
    assert dialog.focusWidget() is dialog.providers.rows["anthropic"].edit


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


def test_welcome_leads_to_the_provider_settings(window: MainWindow, qtbot: QtBot) -> None:
    window.show_welcome()
    window.welcome.settings_button.click()
    from rlm_desktop.ui.settings.dialog import SettingsDialog

    dialogs = [d for d in window.findChildren(SettingsDialog) if d.isVisible()]
    assert len(dialogs) == 1
    assert dialogs[0].tabs.currentWidget() is dialogs[0].providers
    dialogs[0].providers.local_url.setText("http://127.0.0.1:8000/v1")
    dialogs[0].providers.local_url.editingFinished.emit()
    dialogs[0].accept()
    assert window.pages.currentWidget() is window.workspace
    assert window.workspace.controls.endpoint.findData("http://127.0.0.1:8000/v1") > 0


def test_the_direct_call_hint_follows_the_chosen_models_window(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    """~3,000 tokens: one direct call for a 272k-token model, not for a 4k-token one."""
    document = tmp_path / "notes.txt"
    document.write_text("The quarterly figures moved again. " * 500, encoding="utf-8")
    documents, controls = window.workspace.documents, window.workspace.controls
    documents.add_paths([document])
    qtbot.waitUntil(lambda: not documents.loading, timeout=10_000)
    controls.model.setEditText("openai/gpt-5-mini")
    qtbot.waitUntil(lambda: "direct call" in documents.hint.text(), timeout=5_000)
    controls.model.setEditText("anyscale/codellama/CodeLlama-34b-Instruct-hf")
    qtbot.waitUntil(lambda: documents.hint.text() == "", timeout=5_000)
    assert documents.token_model == "anyscale/codellama/CodeLlama-34b-Instruct-hf"


def test_each_key_is_bound_once_and_named_on_its_button(window: MainWindow, qtbot: QtBot) -> None:
    actions = [
        sequence for action in window.findChildren(QAction) for sequence in action.shortcuts()
    ]
    shortcuts = [shortcut.key() for shortcut in window.findChildren(QShortcut)]
    bound = [sequence.toString() for sequence in actions + shortcuts]
    assert len(bound) == len(set(bound))
    tree = window.workspace.tree_panel
    assert (
        tree.next_error_button.toolTip()
        == "Select the next call that failed or whose code raised (F8)"
    )
    assert window.workspace.documents.add_files_button.toolTip() == "Add files (Ctrl+O)"

    window.pages.setCurrentWidget(window.workspace)
    root_id, opening = rlm_call_start("r", None, 1, 1.0)
    window.workspace.apply_events(
        [*opening, *failed_call("r", "bad", root_id, "RateLimitError: slow down", depth=2)]
    )
    qtbot.keyClick(tree.view, Qt.Key.Key_F8)
    assert tree.selected() is window.workspace.model.tree.nodes["bad"]


def test_a_setting_the_engine_refuses_is_named_as_the_window_calls_it(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("The launch moved to March.", encoding="utf-8")
    keys.set_key("openai", "sk-test")
    window.pages.setCurrentWidget(window.workspace)
    window.prefs.set_prices_text("openai/gpt-5-mini = cheap")
    documents, controls = window.workspace.documents, window.workspace.controls
    documents.add_paths([document])
    qtbot.waitUntil(lambda: not documents.loading, timeout=10_000)
    controls.question.setPlainText("When is the launch?")
    assert not window.start_run()
    assert controls.error.text().startswith(
        "Prices (Settings → Run defaults): line 1 ('openai/gpt-5-mini = cheap') is not understood"
    )
    assert not window.starter.running


def test_layout_choices_survive_a_restart(window: MainWindow, qtbot: QtBot) -> None:
    window.workspace.console.wrap.setChecked(True)
    window.workspace.controls.budget.set_open(True)
    window.save_layout()
    again = MainWindow(warm_up=False)
    qtbot.addWidget(again)
    assert again.workspace.console.wrap.isChecked()
    assert again.workspace.controls.budget.is_open
    again.shutdown()


def test_the_dialogs_open_inside_a_small_screen(window: MainWindow, qtbot: QtBot) -> None:
    """Each dialog opens at its natural size where the screen has room, else at the screen's
    available area (what its content can shrink to, at least), and that fits a 1024x640 one."""
    room = window.screen().availableGeometry().size() * SCREEN_SHARE
    smallest = QSize(1024, 640)
    opened = [
        window.show_settings(),
        window.show_sessions(),
        window.show_dashboard(),
        window.show_evaluation(),
    ]
    for dialog in opened:
        qtbot.waitExposed(dialog)
        least = dialog.minimumSizeHint()
        assert dialog.width() <= max(room.width(), least.width()), type(dialog).__name__
        assert dialog.height() <= max(room.height(), least.height()), type(dialog).__name__
        assert least.width() <= smallest.width(), type(dialog).__name__
        assert least.height() <= smallest.height(), type(dialog).__name__
        dialog.close()
