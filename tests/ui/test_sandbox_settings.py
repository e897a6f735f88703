"""Settings → Sandbox: the level this machine really gives, folders opened to model code, and
"refuse without isolation", carried by a real run of the window against the scripted server."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from rlm_desktop.engine.config import ConfigError
from rlm_desktop.engine.events import RunFinished
from rlm_desktop.engine.sandbox.level import SandboxReport, refuse_unless_isolated
from rlm_desktop.paths import database_path
from rlm_desktop.ui.run.controls import REQUIRE_ISOLATION, describe_config_error
from rlm_desktop.ui.sessions.dialog import SANDBOX
from rlm_desktop.ui.settings.dialog import SettingsDialog
from rlm_desktop.ui.settings.sandbox import (
    CHECKING,
    FULL_ISOLATION_HINT,
    MISSING,
)
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.main_window import MainWindow
from tests.engine.test_confinement import EXPECTED_LEVEL, LANDLOCK, NAMESPACES
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import memos, prepare

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")
ISOLATED = bool(LANDLOCK) and (LANDLOCK >= 4 or NAMESPACES)
QUESTION = "What does the opened folder hold?"


def test_the_page_shows_the_sandbox_this_machine_gives(qtbot: QtBot, qloop: object) -> None:
    dialog = SettingsDialog(Preferences(), page="sandbox")
    qtbot.addWidget(dialog)
    dialog.show()
    page = dialog.sandbox
    assert dialog.tabs.currentWidget() is page
    qtbot.waitUntil(lambda: page.report is not None, timeout=10_000)
    report = page.report
    assert report is not None

    assert report.level == EXPECTED_LEVEL
    assert page.level.text() == report.describe()
    assert f"Model code runs in a sandbox: {EXPECTED_LEVEL} — " in page.level.text()
    assert report.isolated == ISOLATED
    assert page.hint.isHidden() == ISOLATED
    if EXPECTED_LEVEL == "landlock+netns+ipcns+pidns+mntns+seccomp+cgroup":
        assert page.level.text() == (
            "Model code runs in a sandbox: landlock+netns+ipcns+pidns+mntns+seccomp+cgroup — reads "
            "only Python, its packages and the folders you open; writes only its scratch folder "
            "(in memory, up to its quota, gone with the run); no network; all its processes end "
            "with the run; its processes share one memory bound."
        )
    dialog.accept()


def test_a_machine_with_less_is_told_what_is_missing(qtbot: QtBot, qloop: object) -> None:
    """What a kernel without Landlock or namespaces reports (this one may have both, so the page
    is given the report such a machine's launcher sends)."""
    dialog = SettingsDialog(Preferences(), page="defaults")
    qtbot.addWidget(dialog)
    page = dialog.sandbox
    assert page.level.text() == CHECKING

    page.show_report(SandboxReport("process-only", filesystem=False, network=False))
    assert page.level.text() == (
        "Model code runs in a process of its own, with no kernel sandbox (process-only) — it can "
        "read and write every file your account can; it can reach the network; processes it "
        "starts in the background can outlive the run; memory is bounded per process."
    )
    assert not page.hint.isHidden()
    assert page.hint.text() == FULL_ISOLATION_HINT

    page.show_report(SandboxReport("landlock", filesystem=True, network=False))
    assert "Model code runs in a sandbox: landlock — reads only Python" in page.level.text()
    assert "; it can reach the network; " in page.level.text()
    dialog.accept()


@pytest.mark.skipif(not ISOLATED, reason="no filesystem and network isolation on this machine")
def test_an_opened_folder_is_readable_by_a_real_run_and_its_sibling_is_not(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    opened, closed, gone = tmp_path / "opened", tmp_path / "closed", tmp_path / "gone"
    for folder in (opened, closed, gone):
        folder.mkdir()
        (folder / "data.txt").write_text(f"content of {folder.name}")

    dialog = window.show_settings("sandbox")
    page = dialog.sandbox
    qtbot.waitUntil(lambda: page.report is not None, timeout=10_000)
    assert page.add_folder(str(opened)) == str(opened.resolve())
    page.add_folder(str(gone))
    page.require.setChecked(True)
    dialog.accept()
    (gone / "data.txt").unlink()
    gone.rmdir()

    saved = Preferences()
    assert saved.allowed_folders() == [str(opened.resolve()), str(gone.resolve())]
    assert saved.require_isolation
    dialog = window.show_settings("sandbox")
    listed = [dialog.sandbox.folders.item(row).text() for row in range(2)]
    assert listed == [str(opened.resolve()), f"{gone.resolve()}  ({MISSING})"]
    dialog.sandbox.folders.item(1).setSelected(True)
    dialog.sandbox.remove_selected()
    assert Preferences().allowed_folders() == [str(opened.resolve())]
    dialog.sandbox.add_folder(str(gone))  # missing again: listed, but no run opens it
    dialog.accept()

    code = (
        "try:\n"
        f"    open({str(closed / 'data.txt')!r}).read()\n"
        "    sibling = 'READ'\n"
        "except OSError as error:\n"
        "    sibling = 'DENIED ' + type(error).__name__\n"
        f"FINAL(open({str(opened / 'data.txt')!r}).read() + ' | sibling ' + sibling)"
    )
    scripted_server.respond_with(scripted({QUESTION: [repl(code)]}))
    finished = _run_to_its_end(window, qtbot, scripted_server)
    ws = window.workspace
    assert (finished.status, finished.answer) == (
        "completed",
        "content of opened | sibling DENIED PermissionError",
    )
    assert "content of closed" not in ws.answer.text.toPlainText()
    assert ws.answer.stats.text().endswith(f" · kernel sandbox ({EXPECTED_LEVEL})")
    settings = ws.model.tree.run.settings
    assert settings["allow_read"] == [str(opened.resolve())]
    assert settings["require_isolation"] is True
    stored = window.starter.store().session(finished.run_id)["session"]
    assert stored["settings"]["allow_read"] == [str(opened.resolve())]
    assert stored["settings"]["require_isolation"] is True
    with sqlite3.connect(database_path()) as db:
        assert db.execute("SELECT sandbox FROM sessions").fetchall() == [(EXPECTED_LEVEL,)]

    sessions = window.show_sessions()
    assert sessions.table.item(0, SANDBOX).text() == f"kernel ({EXPECTED_LEVEL})"
    assert "sandbox" not in stored, "`sessions show --json` keeps its documented keys"
    sessions.reject()
    ws.answer.clear()
    assert window.open_session(finished.run_id)
    qtbot.waitUntil(lambda: ws.answer.isVisible(), timeout=10_000)
    assert ws.answer.stats.text().endswith(f" · kernel sandbox ({EXPECTED_LEVEL})")


def test_a_refused_run_names_the_checkbox_in_one_line() -> None:
    """What the window shows when the checkbox is set on a machine that gives less (the engine
    refuses with this error; this machine may isolate, so the report is such a machine's)."""
    report = SandboxReport("landlock", filesystem=True, network=False)
    with pytest.raises(ConfigError) as refused:
        refuse_unless_isolated(report)

    assert describe_config_error(refused.value) == (
        f"“{REQUIRE_ISOLATION}” (Settings → Sandbox) is set but this system's sandbox "
        "(landlock) does not isolate the network; model code was not run."
    )


def test_the_scratch_quota_set_here_holds_in_a_real_run(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    """The quota chosen on the page is saved, reaches the run's settings, and a cell that writes
    past it fails with the note that names it (issue #41)."""
    dialog = window.show_settings("sandbox")
    page = dialog.sandbox
    page.quota.setValue(8)
    dialog.accept()
    assert Preferences().scratch_quota_mb == 8
    fill = (
        "n = 0\n"
        "while True:\n"
        "    open(f'f{n}.bin', 'wb').write(b'x' * (1 << 20))\n"
        "    n += 1\n"
    )
    scripted_server.respond_with(scripted({QUESTION: [repl(fill), repl("FINAL('done')")]}))
    finished = _run_to_its_end(window, qtbot, scripted_server)
    assert finished.status == "completed"
    assert window.workspace.model.tree.run.settings["scratch_quota_mb"] == 8
    turns = window.starter.store().session(finished.run_id)["turns"]
    assert "at most 8 MB" in turns[0]["error"]


def _run_to_its_end(window: MainWindow, qtbot: QtBot, server: ScriptedServer) -> RunFinished:
    """Ask QUESTION of a memo in the window, as a user does; the run's end."""
    prepare(window, qtbot, server, QUESTION, memos(1))
    ws = window.workspace
    ws.controls.run_button.click()
    qtbot.waitUntil(lambda: ws.answer.isVisible(), timeout=60_000)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=10_000)
    finished = ws.model.tree.run.finished
    assert finished is not None
    return finished
