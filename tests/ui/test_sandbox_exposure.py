"""Settings → Sandbox warns where the folder is added when it exposes secrets (`~/.ssh`, the home
folder, the app's data folder, a link to one of them), and a run started with such a folder
says so under the run's fields; a project folder opens without a word."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from rlm_desktop.engine.exposure import FIX
from rlm_desktop.ui.settings.dialog import SettingsDialog
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import memos, prepare


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own, holding a `.ssh` folder with a key."""
    home = tmp_path / "user"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (home / "project").mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def test_adding_a_folder_that_exposes_secrets_warns_on_the_page(
    qtbot: QtBot, qloop: object, user_home: Path, tmp_path: Path, isolated_home: Path
) -> None:
    keys = user_home / ".ssh"
    link = tmp_path / "notes-folder"
    link.symlink_to(keys)
    dialog = SettingsDialog(Preferences(), page="sandbox")
    qtbot.addWidget(dialog)
    dialog.show()
    page = dialog.sandbox
    assert page.exposure.isHidden()

    page.add_folder(str(user_home / "project"))
    assert page.exposure.isHidden()  # a project folder beside ~/.ssh exposes nothing

    page.add_folder(str(keys))
    assert page.exposure.isVisibleTo(page)
    assert page.exposure.text() == (
        f"{keys} is your SSH keys (~/.ssh): model code may read all of it (read-only); {FIX}."
    )
    listed = page.folders.item(1)
    assert listed is not None
    assert listed.toolTip() == page.exposure.text()

    page.add_folder(str(user_home))
    (isolated_home / "scratch").mkdir(parents=True, exist_ok=True)
    page.add_folder(str(isolated_home / "scratch"))
    lines = page.exposure.text().splitlines()
    assert len(lines) == 3
    assert lines[1].startswith(f"{user_home} is your home folder ({user_home}), with your SSH")
    assert lines[2].startswith(f"{isolated_home / 'scratch'} is inside the app's data folder")
    dialog.accept()

    # The link is stored resolved (as the sandbox opens it), and warned about as ~/.ssh.
    dialog = SettingsDialog(Preferences(), page="sandbox")
    qtbot.addWidget(dialog)
    page = dialog.sandbox
    assert len(page.exposure.text().splitlines()) == 3  # the saved folders are warned about
    for row in range(page.folders.count()):
        item = page.folders.item(row)
        assert item is not None
        item.setSelected(True)
    page.remove_selected()
    assert page.exposure.isHidden()
    page.add_folder(str(link))
    assert f"{keys} is your SSH keys (~/.ssh)" in page.exposure.text()
    dialog.accept()


def test_a_run_with_such_a_folder_says_so_under_its_fields(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, user_home: Path
) -> None:
    window.prefs.set_allowed_folders([str(user_home / ".ssh")])
    window.prefs.set_prices_text("openai/test-model = 0, 0")  # no $0 notice beside it
    scripted_server.respond_with(scripted(root=[repl("FINAL('7 zebrafish')")]))
    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
    controls = window.workspace.controls

    assert window.start_run()
    qtbot.waitUntil(lambda: "SSH" in controls.error.text(), timeout=20_000)
    assert controls.error.text() == (
        f"Settings → Sandbox: {user_home / '.ssh'} is your SSH keys (~/.ssh): model code may "
        f"read all of it (read-only); {FIX}."
    )
    qtbot.waitUntil(lambda: not window.starter.running, timeout=60_000)
    assert "7 zebrafish" in window.workspace.answer.text.toPlainText()
