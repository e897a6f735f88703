"""The first hour, clicks and keys only: a local server set up once is used, a run is checked
before anything is sent, and a key kept for this session only is never taken for a saved one."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from rlm_desktop.engine.config import DEFAULT_MODEL
from rlm_desktop.providers import keys, registry
from rlm_desktop.ui.settings.dialog import SettingsDialog
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_server import ScriptedServer

ANSWER = "The launch moved to 14 March."


@pytest.fixture(autouse=True)
def no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh install: no provider key in the environment either."""
    for provider in registry.PROVIDERS.values():
        if provider.env_var:
            monkeypatch.delenv(provider.env_var, raising=False)


def open_window(qtbot: QtBot) -> MainWindow:
    """The main window as the app starts it (a restart, when one was open before)."""
    window = MainWindow(warm_up=False)
    qtbot.addWidget(window)
    window.show()
    return window


def settings(window: MainWindow, page: str = "providers") -> SettingsDialog:
    """Open Settings as Ctrl+, does."""
    return window.show_settings(page)


def add_document(window: MainWindow, qtbot: QtBot, folder: Path, question: str) -> None:
    """A short document and a question, as a user adds them."""
    document = folder / "memo.txt"
    document.write_text("The launch moved from 2 March to 14 March.", encoding="utf-8")
    window.pages.setCurrentWidget(window.workspace)
    window.workspace.documents.add_paths([document])
    qtbot.waitUntil(lambda: not window.workspace.documents.loading, timeout=10_000)
    window.workspace.controls.question.setPlainText(question)


def test_a_local_server_set_up_once_is_used_by_the_next_run_and_after_a_restart(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    controls = window.workspace.controls
    dialog = settings(window)
    providers = dialog.providers
    providers.local_url.setText(scripted_server.base_url)
    providers.list_buttons["local"].click()
    qtbot.waitUntil(lambda: "1 model" in providers.list_results["local"].text(), timeout=5000)
    assert controls.model_names.stringList()[0] == "openai/test-model"
    assert "openai/test-model" in dialog.defaults.fields.model_names.stringList()
    dialog.tabs.setCurrentIndex(dialog.PAGES.index("defaults"))
    assert dialog.defaults.fields.model.currentText() == "openai/test-model"
    assert dialog.defaults.fields.endpoint.name() == "local"
    dialog.accept()

    assert controls.endpoint.name() == "local"
    assert controls.endpoint.url() == scripted_server.base_url
    assert controls.model.currentText() == "openai/test-model"
    assert controls.error.text().startswith("No hosted provider has a key: runs go to")

    scripted_server.enqueue(ANSWER)
    add_document(window, qtbot, tmp_path, "When is the launch?")
    qtbot.mouseClick(controls.run_button, Qt.MouseButton.LeftButton)
    answer = window.workspace.answer
    qtbot.waitUntil(answer.isVisible, timeout=30_000)
    assert ANSWER in answer.text.toPlainText()
    assert [r["model"] for r in scripted_server.chat_requests()] == ["test-model"]
    qtbot.waitUntil(lambda: not window.starter.running, timeout=10_000)

    window.close()
    again = open_window(qtbot)
    assert again.pages.currentWidget() is again.workspace
    assert again.workspace.controls.endpoint.name() == "local"
    assert again.workspace.controls.model.currentText() == "openai/test-model"
    again.shutdown()


def test_editing_the_server_address_keeps_the_endpoint(window: MainWindow, qtbot: QtBot) -> None:
    window.prefs.set_base_url("local", "http://127.0.0.1:8000/v1")
    window.starter.apply_preferences()
    controls = window.workspace.controls
    controls.endpoint.setCurrentIndex(controls.endpoint.findData("http://127.0.0.1:8000/v1"))
    assert Preferences().run_defaults().endpoint == "local"

    dialog = settings(window)
    address = dialog.providers.local_url
    for typed in ("", "http://127.0.0.1:8001/v1"):
        address.setText(typed)
        address.editingFinished.emit()
    assert dialog.defaults.fields.endpoint.url() == "http://127.0.0.1:8001/v1"
    dialog.accept()

    assert controls.endpoint.name() == "local"
    assert controls.request().api_base == "http://127.0.0.1:8001/v1"
    assert Preferences().run_defaults().endpoint == "local"

    controls.endpoint.setCurrentIndex(0)
    assert controls.endpoint.name() == ""
    assert Preferences().run_defaults().endpoint == ""


def test_a_hosted_key_keeps_the_providers_api(window: MainWindow, qtbot: QtBot) -> None:
    keys.set_key("openai", "sk-test")
    window.prefs.set_base_url("ollama", "http://127.0.0.1:11434")
    window.starter.apply_preferences()
    controls = window.workspace.controls
    assert controls.endpoint.findData("http://127.0.0.1:11434") > 0
    assert controls.endpoint.name() == ""
    assert controls.model.currentText() == DEFAULT_MODEL


def test_run_defaults_changed_in_settings_reach_the_open_window(
    window: MainWindow, qtbot: QtBot
) -> None:
    controls = window.workspace.controls
    controls.model.setEditText("anthropic/claude-haiku-4-5")
    controls.max_turns.setValue(7)
    dialog = settings(window, "defaults")
    fields = dialog.defaults.fields
    fields.max_cost.setValue(2.5)
    fields.max_depth.setValue(3)
    fields.mode.setCurrentIndex(fields.mode.findData("rlm"))
    dialog.accept()
    assert controls.max_cost.value() == 2.5
    assert controls.max_depth.value() == 3
    assert controls.mode.currentData() == "rlm"
    assert "$2.50" in controls.budget.summary.text()
    assert controls.model.currentText() == "anthropic/claude-haiku-4-5"
    assert controls.max_turns.value() == 7


def ready_to_run(window: MainWindow, qtbot: QtBot, server: ScriptedServer, folder: Path) -> None:
    """A local server set up, a document and a question: everything but the model checks out."""
    window.prefs.set_base_url("local", server.base_url)
    window.starter.apply_preferences()
    add_document(window, qtbot, folder, "When is the launch?")


def test_a_model_the_server_does_not_serve_is_named_before_anything_is_sent(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    ready_to_run(window, qtbot, scripted_server, tmp_path)
    controls = window.workspace.controls
    controls.model.setEditText("openai/no-such-model")
    assert window.start_run()
    assert controls.error.text() == "Checking the model and endpoint…"
    assert not controls.run_button.isEnabled()
    qtbot.waitUntil(lambda: not window.starter.running, timeout=10_000)

    assert controls.error.text().startswith("The root model 'openai/no-such-model' is not served")
    assert "openai/test-model" in controls.error.text()
    assert controls.fix_button.isVisible()
    assert controls.fix_button.text() == "Choose the root model"
    assert controls.run_button.isEnabled()
    assert scripted_server.chat_requests() == []
    assert window.workspace.model.tree.root is None
    window.activateWindow()
    controls.fix_button.click()
    assert window.focusWidget() is controls.model


def test_a_server_that_is_not_there_leads_to_its_address(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    ready_to_run(window, qtbot, scripted_server, tmp_path)
    scripted_server.stop()
    controls = window.workspace.controls
    controls.model.setEditText("openai/test-model")
    assert window.start_run()
    qtbot.waitUntil(lambda: not window.starter.running, timeout=10_000)
    assert "is the server running?" in controls.error.text()
    assert controls.fix_button.text() == "Open Settings → Providers"
    controls.fix_button.click()
    dialog = window.findChild(SettingsDialog)
    assert dialog is not None
    assert dialog.isVisible()
    assert dialog.tabs.currentWidget() is dialog.providers
    assert dialog.focusWidget() is dialog.providers.local_url


def test_stop_during_the_check_starts_nothing(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    ready_to_run(window, qtbot, scripted_server, tmp_path)
    controls = window.workspace.controls
    controls.model.setEditText("openai/test-model")
    assert window.start_run()
    assert controls.stop_button.isEnabled()
    qtbot.keyClick(controls.question, Qt.Key.Key_Escape)
    assert controls.run_button.isEnabled()
    assert controls.error.isHidden()
    qtbot.waitUntil(lambda: not window.starter.running, timeout=10_000)
    assert window.workspace.model.tree.root is None
    assert scripted_server.chat_requests() == []


def test_a_key_kept_for_this_session_only_is_not_recorded_as_saved(
    qtbot: QtBot, qloop: object, no_keyring: None
) -> None:
    window = open_window(qtbot)
    assert window.pages.currentWidget() is window.welcome
    dialog = settings(window)
    page = dialog.providers
    page.session_only.setChecked(True)
    page.rows["openai"].edit.setText("sk-test-session")
    assert page.rows["openai"].save()
    dialog.accept()
    assert window.pages.currentWidget() is window.workspace
    assert not Preferences().get_bool("providers/key_saved")
    window.close()

    keys.clear_session_keys()  # what quitting the app does to them
    again = open_window(qtbot)
    assert again.pages.currentWidget() is again.welcome
    again.shutdown()


def test_without_a_keyring_a_refused_key_leaves_its_field_whole_and_names_the_backend_once(
    qtbot: QtBot, qloop: object, no_keyring: None
) -> None:
    dialog = SettingsDialog(Preferences(), page="providers")
    qtbot.addWidget(dialog)
    dialog.show()
    page = dialog.providers
    row = page.rows["openai"]
    QApplication.processEvents()
    width = row.edit.width()
    row.edit.setText("sk-test-refused")
    assert not row.save()
    QApplication.processEvents()
    assert row.edit.width() >= width
    assert row.status.text() == "not saved"
    assert row.problem.isVisible()
    assert "Keep keys for this session only" in row.problem.text()
    shown = " ".join(label.text() for label in page.findChildren(QLabel) if label.isVisible())
    assert shown.count("keyring.backends.fail.Keyring") == 1
    assert shown.lower().count("no working keyring") == 1
