"""Settings: keys go to the keyring (never a file), a missing keyring is said plainly,
run defaults and appearance persist, profiles can be copied and edited."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.engine.profiles import ProfileDraft, save_user_profile
from rlm_desktop.paths import data_dir
from rlm_desktop.providers import keys
from rlm_desktop.ui.appearance.theme import apply_theme
from rlm_desktop.ui.settings.dialog import SettingsDialog
from rlm_desktop.ui.shared.preferences import Preferences
from tests.memory_keyring import MemoryKeyring
from tests.scripted_server import ScriptedServer

SECRET = "sk-test-SECRET-0123456789abcdef"


def _dialog(qtbot: QtBot, page: str = "providers") -> SettingsDialog:
    dialog = SettingsDialog(Preferences(), page=page)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _files_containing(folder: Path, needle: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_key_goes_to_the_keyring_and_never_to_a_file(
    qtbot: QtBot, qloop: object, memory_keyring: MemoryKeyring
) -> None:
    dialog = _dialog(qtbot)
    page = dialog.providers
    assert not page.warning_shown()
    assert "MemoryKeyring" in page.backend.text()
    row = page.rows["openai"]
    row.edit.setText(SECRET)
    assert row.save()
    assert memory_keyring.passwords[("rlm-desktop", "openai")] == SECRET
    assert row.status.text() == "saved in the keyring"
    assert row.edit.text() == ""
    dialog.accept()
    assert Path(Preferences().path).exists()
    assert _files_containing(data_dir(), SECRET) == []
    row.remove()
    assert keys.get_key("openai") is None


def test_missing_keyring_warns_and_offers_session_only(
    qtbot: QtBot, qloop: object, no_keyring: None
) -> None:
    dialog = _dialog(qtbot)
    page = dialog.providers
    assert page.warning_shown()
    assert "No working keyring" in page.backend.text()
    assert "session only" in page.backend.text()
    assert not page.session_only.isHidden()
    row = page.rows["anthropic"]
    row.edit.setText(SECRET)
    assert not row.save()
    assert row.status.text().startswith("not saved")
    page.session_only.setChecked(True)
    row.edit.setText(SECRET)
    assert row.save()
    assert keys.get_key("anthropic") == SECRET
    assert row.status.text() == "kept for this session only"
    dialog.accept()
    assert _files_containing(data_dir(), SECRET) == []


def test_other_provider_and_local_urls_persist(
    qtbot: QtBot, qloop: object, memory_keyring: MemoryKeyring
) -> None:
    dialog = _dialog(qtbot)
    page = dialog.providers
    page.other.setText("mistral")
    page.add_other()
    assert "mistral" in page.rows
    page.local_url.setText("http://127.0.0.1:9999/v1")
    page.local_url.editingFinished.emit()
    dialog.accept()
    prefs = Preferences()
    assert prefs.extra_providers() == ["mistral"]
    assert prefs.base_url("local") == "http://127.0.0.1:9999/v1"


def test_local_server_models_are_listed(
    qtbot: QtBot, qloop: object, scripted_server: object, memory_keyring: MemoryKeyring
) -> None:
    dialog = _dialog(qtbot)
    page = dialog.providers
    page.local_url.setText(scripted_server.base_url)  # type: ignore[attr-defined]
    page.list_buttons["local"].click()
    result = page.list_results["local"]
    qtbot.waitUntil(lambda: "openai/test-model" in result.text(), timeout=5000)
    assert result.text().startswith("1 model")
    page.ollama_url.setText("http://127.0.0.1:9")
    page.list_buttons["ollama"].click()
    failed = page.list_results["ollama"]
    qtbot.waitUntil(lambda: "is the server running" in failed.text(), timeout=5000)


def test_a_busy_local_server_is_said_to_be_busy_not_down(
    qtbot: QtBot, qloop: object, scripted_server: ScriptedServer, memory_keyring: MemoryKeyring
) -> None:
    """llama-cpp-python answers nothing, its model list included, while it generates."""
    scripted_server.busy = True
    dialog = _dialog(qtbot)
    page = dialog.providers
    page.local_url.setText(scripted_server.base_url)
    page.list_buttons["local"].click()
    result = page.list_results["local"]
    qtbot.waitUntil(lambda: "accepted the connection" in result.text(), timeout=10_000)
    assert "it is probably still generating" in result.text()
    assert "is the server running" not in result.text()


def test_run_defaults_persist(qtbot: QtBot, qloop: object, memory_keyring: MemoryKeyring) -> None:
    dialog = _dialog(qtbot, "defaults")
    fields = dialog.defaults.fields
    fields.model.setEditText("anthropic/claude-haiku-4-5")
    fields.max_cost.setValue(2.5)
    fields.max_depth.setValue(3)
    dialog.accept()
    defaults = Preferences().run_defaults()
    assert defaults.model == "anthropic/claude-haiku-4-5"
    assert defaults.max_cost_usd == 2.5
    assert defaults.max_depth == 3


def test_profiles_copy_edit_and_delete(
    qtbot: QtBot, qloop: object, memory_keyring: MemoryKeyring
) -> None:
    save_user_profile(
        paths.user_profiles_dir(),
        ProfileDraft(name="mine", prompt="my prompt", patterns=("openai/*",)),
    )
    dialog = _dialog(qtbot, "profiles")
    page = dialog.profiles
    names = [page.list.item(i).text() for i in range(page.list.count())]
    assert names[0] == "mine  (mine)"
    page.list.setCurrentRow(0)
    assert page.editor.toPlainText() == "my prompt"
    assert not page.editor.isReadOnly()
    copy = page.copy_selected()
    assert copy == "mine-copy"
    page.editor.setPlainText("edited prompt")
    page.patterns.setText("anthropic/*, gemini/*")
    assert page.code_stop.currentData() == "after-code"
    assert page.code_stop.currentText() == "read on while code follows"
    assert not page.constrained_replies.isChecked()
    page.constrained_replies.setChecked(True)
    page.code_stop.setCurrentIndex(page.code_stop.findData("first-block"))
    page.save_selected()
    from rlm_desktop.engine.profiles import choose_profile

    chosen = choose_profile(paths.profile_folders(), "gemini/gemini-2.5-flash", "mine-copy")
    assert chosen.prompt == "edited prompt"
    assert chosen.patterns == ("anthropic/*", "gemini/*")
    assert (chosen.constrained_replies, chosen.code_stop) == (True, "first-block")
    assert page.constrained_replies.isChecked()
    assert page.constrained_replies.isEnabled()
    assert choose_profile(paths.profile_folders(), "anthropic/claude-x").name == "mine-copy"
    page.delete_selected(confirm=False)
    assert "mine-copy" not in [page.list.item(i).text() for i in range(page.list.count())]


def test_bundled_profiles_are_read_only(
    qtbot: QtBot, qloop: object, memory_keyring: MemoryKeyring
) -> None:
    dialog = _dialog(qtbot, "profiles")
    page = dialog.profiles
    bundled = [i for i in range(page.list.count()) if "(mine)" not in page.list.item(i).text()]
    assert [page.list.item(i).text() for i in bundled] == [
        "gemma",
        "reasoning",
        "small",
        "local",
        "default",
    ]
    page.list.setCurrentRow(bundled[0])
    assert page.editor.isReadOnly()
    assert not page.save_button.isEnabled()
    assert (page.code_stop.currentData(), page.code_stop.isEnabled()) == ("first-block", False)
    page.list.setCurrentRow(bundled[-1])
    assert page.code_stop.currentText() == "read on while code follows"
    page.list.setCurrentRow(bundled[0])
    name = page.copy_selected()
    assert name is not None
    assert page.selected().name == name
    assert not page.editor.isReadOnly()
    assert (page.code_stop.currentData(), page.code_stop.isEnabled()) == ("first-block", True)


def test_a_profiles_system_role_shows_is_copied_and_saved(
    qtbot: QtBot, qloop: object, memory_keyring: MemoryKeyring
) -> None:
    from rlm_desktop.engine.profiles import choose_profile

    dialog = _dialog(qtbot, "profiles")
    page = dialog.profiles
    names = [page.list.item(i).text() for i in range(page.list.count())]
    page.list.setCurrentRow(names.index("gemma"))
    assert not page.system_role.isChecked()
    assert not page.system_role.isEnabled()
    page.list.setCurrentRow(names.index("default"))
    assert page.system_role.isChecked()
    page.list.setCurrentRow(names.index("gemma"))
    copy = page.copy_selected()
    assert copy == "gemma-copy"
    assert choose_profile(paths.profile_folders(), "x", copy).system_role is False
    assert page.system_role.isEnabled()
    assert not page.system_role.isChecked()
    page.system_role.setChecked(True)
    page.save_selected()
    assert choose_profile(paths.profile_folders(), "x", copy).system_role is True


def test_dark_theme_applies(qtbot: QtBot, qloop: object, memory_keyring: MemoryKeyring) -> None:
    dialog = _dialog(qtbot, "appearance")
    dialog.appearance.theme.setCurrentIndex(dialog.appearance.theme.findData("dark"))
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    assert app.palette().color(QPalette.ColorRole.Window).lightness() < 100
    assert Preferences().theme == "dark"
    apply_theme(app, "light")
    assert app.palette().color(QPalette.ColorRole.Window).lightness() > 150


def test_model_prices_persist_and_a_bad_line_is_named(qtbot: QtBot, qloop: object) -> None:
    dialog = _dialog(qtbot, page="defaults")
    page = dialog.defaults
    page.prices.setPlainText("openai/test-model = 1.5, 6\nbroken line")
    page.save()
    assert "Line 2 (" in page.prices_error.text()
    page.prices.setPlainText("openai/test-model = 1.5, 6  # my deployment")
    page.save()
    assert page.prices_error.text() == ""
    dialog.accept()

    from rlm_desktop.engine.config import Budget
    from rlm_desktop.ui.run.controls import RunRequest
    from rlm_desktop.ui.run.starter import build_config

    request = RunRequest(
        query="q",
        model="openai/test-model",
        sub_model=None,
        api_base=None,
        mode="rlm",
        profile=None,
        budget=Budget(max_depth=2, max_turns=5, timeout_s=60),
    )
    config = build_config(request, Preferences().prices_text())
    assert config.prices == {"openai/test-model": (1.5e-6, 6e-6)}
