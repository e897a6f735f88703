"""A prompt profile whose file cannot be read: the window and the settings page say which file
and how to fix it, keep every other profile, and never crash."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.providers import keys
from rlm_desktop.ui.settings.dialog import SettingsDialog
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.main_window import MainWindow
from tests.memory_keyring import MemoryKeyring
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

INDEX = (
    '[mine]\nprompt = "mine.txt"\npatterns = ["openai/test-*"]\n'
    '[house]\nprompt = "house.txt"\npatterns = ["openai/house-*"]\n'
)


def _profiles() -> Path:
    """The user's profiles: `mine` (a Latin-1 prompt, for test models) and `house` (fine)."""
    folder = paths.user_profiles_dir()
    folder.mkdir(parents=True)
    (folder / "profiles.toml").write_text(INDEX, encoding="utf-8")
    (folder / "mine.txt").write_bytes(b"Caf\xe9 rules.")
    (folder / "house.txt").write_text("House rules.", encoding="utf-8")
    return folder / "mine.txt"


def _problem(prompt: Path) -> str:
    return f"prompt file {prompt} is not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8"


def test_the_settings_page_lists_the_other_profiles_and_names_the_file(
    qtbot: QtBot, qloop: object, memory_keyring: MemoryKeyring
) -> None:
    prompt = _profiles()
    dialog = SettingsDialog(Preferences(), page="profiles")
    qtbot.addWidget(dialog)
    dialog.show()
    page = dialog.profiles
    names = [page.list.item(i).text() for i in range(page.list.count())]
    assert names == ["house  (mine)", "gemma", "reasoning", "small", "local", "default"]
    assert page.problems.text() == f"Profile 'mine': {_problem(prompt)}."
    assert page.problems.isVisible()
    page.list.setCurrentRow(1)
    assert page.problems.isVisible()  # still said while another profile is shown
    assert page.info.text().startswith("gemma — bundled")
    assert page.editor.toPlainText().strip()


def test_the_window_names_the_file_and_does_not_start_a_run_that_would_use_it(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    prompt = _profiles()
    loaded = asyncio.ensure_future(window.starter.load_profiles())
    qtbot.waitUntil(loaded.done, timeout=10_000)
    loaded.result()
    controls = window.workspace.controls
    picker = [controls.profile.itemData(i) for i in range(controls.profile.count())]
    assert picker == ["", "house", "gemma", "reasoning", "small", "local", "default"]
    assert _problem(prompt) in controls.error.text()

    scripted_server.respond_with(scripted(root=[repl("FINAL(7)")]))
    keys.set_key("local", "sk-local")
    window.prefs.set_base_url("local", scripted_server.base_url)
    window.starter.apply_preferences()
    window.pages.setCurrentWidget(window.workspace)
    controls.endpoint.setCurrentIndex(controls.endpoint.findData(scripted_server.base_url))
    controls.model.setEditText("openai/test-model")
    controls.mode.setCurrentIndex(controls.mode.findData("rlm"))
    controls.question.setPlainText("How many?")
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    window.workspace.documents.add_paths([document])
    qtbot.waitUntil(lambda: not window.workspace.documents.loading, timeout=20_000)
    controls.error.setText("")
    window.activateWindow()
    qtbot.keyClick(controls.question, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: _problem(prompt) in controls.error.text(), timeout=10_000)
    assert not window.starter.running
    assert controls.run_button.isEnabled()
    assert scripted_server.chat_requests() == []
