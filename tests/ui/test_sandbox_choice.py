"""Settings → Sandbox's "Where model code runs": saved at once, said for this system, probed for
the backend a run will take, and carried by real runs of the window (issue #42); and the
WebAssembly sandbox made ready in the background when the window starts."""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.engine.events import RunFinished
from rlm_desktop.engine.sandbox.choice import backend_for
from rlm_desktop.engine.sandbox.wasm.prepare import is_prepared
from rlm_desktop.ui.run.controls import describe_config_error
from rlm_desktop.ui.run.sandbox_preparation import PREPARING, failed_text
from rlm_desktop.ui.sessions.dialog import SANDBOX
from rlm_desktop.ui.settings.dialog import SettingsDialog
from rlm_desktop.ui.settings.sandbox import SandboxPage
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.main_window import MainWindow
from tests.memory_keyring import MemoryKeyring
from tests.qt_fixtures import opened_window
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import memos, prepare

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")
QUESTION = "Which system runs the code?"
WHERE = "import sys\nFINAL(sys.platform)"
"""Model code that says where it runs: `wasi` in the WebAssembly sandbox, `linux` in the kernel's."""


def test_the_choice_is_saved_at_once_probed_and_taken_by_the_next_runs(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, wasm_guest: Path
) -> None:
    dialog = window.show_settings("sandbox")
    page = dialog.sandbox
    assert page.backends["auto"].isChecked()
    qtbot.waitUntil(lambda: page.report is not None, timeout=10_000)
    assert page.report is not None
    assert not page.report.level.startswith("wasm")

    page.backends["wasm"].click()
    assert Preferences().sandbox_backend == "wasm", "saved at once, as the page's other choices"
    qtbot.waitUntil(
        lambda: page.report is not None and page.report.level.startswith("wasm"), timeout=60_000
    )
    assert page.level.text() == page.report.describe()
    assert page.level.text().startswith("Model code runs in a WebAssembly Python (wasm+wasmtime")
    dialog.accept()

    scripted_server.respond_with(scripted({QUESTION: [repl(WHERE)]}))
    finished = _run(window, qtbot, scripted_server)
    ws = window.workspace
    assert (finished.status, finished.answer) == ("completed", "wasi")
    assert finished.sandbox.startswith("wasm+wasmtime")
    assert ws.model.tree.run.settings["sandbox"] == "wasm"
    assert ws.answer.stats.text().endswith(f" · WebAssembly sandbox ({finished.sandbox})")
    sessions = window.show_sessions()
    assert sessions.table.item(0, SANDBOX).text() == f"WebAssembly ({finished.sandbox})"
    sessions.reject()

    dialog = window.show_settings("sandbox")
    assert dialog.sandbox.backends["wasm"].isChecked()
    dialog.sandbox.backends["auto"].click()
    dialog.accept()
    assert Preferences().sandbox_backend == "auto"
    finished = _run(window, qtbot, scripted_server)
    assert (finished.status, finished.answer) == ("completed", "linux")
    assert ws.model.tree.run.settings["sandbox"] == "auto"
    assert ws.answer.stats.text().endswith(f" · kernel sandbox ({finished.sandbox})")
    with sqlite3.connect(paths.database_path()) as db:
        levels = [row[0] for row in db.execute("SELECT sandbox FROM sessions ORDER BY started_at")]
    assert [level.startswith("wasm") for level in levels] == [True, False]


def test_switching_back_and_forth_leaves_one_probe_and_no_process(
    qtbot: QtBot, qloop: object, wasm_guest: Path
) -> None:
    """Each change stops the probe before it (a WebAssembly host half started among them); the
    page ends on the last choice's report, and no launcher or host outlives the dialog."""
    dialog = SettingsDialog(Preferences(), page="sandbox")
    qtbot.addWidget(dialog)
    dialog.show()
    page = dialog.sandbox
    for choice in ("wasm", "kernel", "wasm", "auto", "wasm"):
        page.backends[choice].click()
        qtbot.wait(50)
    qtbot.waitUntil(lambda: page.report is not None, timeout=60_000)
    assert page.report is not None
    assert page.report.level.startswith("wasm+wasmtime")
    assert Preferences().sandbox_backend == "wasm"
    page.backends["kernel"].click()
    dialog.accept()  # the kernel probe just begun is stopped with the dialog


def test_automatic_says_what_it_takes_here_and_why(qtbot: QtBot, qloop: object) -> None:
    here = SandboxPage(Preferences())
    qtbot.addWidget(here)
    assert here.backends["auto"].text() == "Automatic: the kernel sandbox here (Linux gives one)"
    assert here.backends["kernel"].isEnabled()

    windows = SandboxPage(Preferences(), platform="win32")
    qtbot.addWidget(windows)
    assert windows.backends["auto"].text() == (
        "Automatic: WebAssembly here (Windows gives model code no kernel sandbox)"
    )
    kernel = windows.backends["kernel"]
    assert not kernel.isEnabled()
    assert kernel.text() == "Kernel sandbox: not on Windows (Linux and macOS have one)"
    assert windows.backends["wasm"].isEnabled()


def test_a_damaged_or_impossible_choice_is_said_in_one_line(qtbot: QtBot, qloop: object) -> None:
    prefs = Preferences()
    prefs.set("sandbox/backend", "docker")
    assert Preferences().sandbox_backend == "auto", "a value the app never wrote reads as auto"
    page = SandboxPage(Preferences())
    qtbot.addWidget(page)
    assert page.backends["auto"].isChecked()

    with pytest.raises(ConfigError) as refused:  # what a run started on Windows under kernel gets
        backend_for("kernel", "win32")
    said = (
        "“Where model code runs” (Settings → Sandbox) kernel: this system gives model code no "
        "kernel sandbox (Linux and macOS do); use wasm or auto."
    )
    assert describe_config_error(refused.value) == said
    prefs.set_sandbox_backend("kernel")  # a settings file brought over from a Linux machine
    moved = SandboxPage(Preferences(), platform="win32")
    qtbot.addWidget(moved)
    moved.show()
    assert moved.backends["kernel"].isChecked()
    assert not moved.backends["kernel"].isEnabled()
    assert moved.level.text() == said
    assert moved.probe is None, "nothing is probed for a choice the system cannot give"
    moved.backends["auto"].click()
    assert Preferences().sandbox_backend == "auto"
    moved.stop_probe()
    assert failed_text("GuestMissing: the guest is not built") == (
        "The WebAssembly sandbox could not be prepared (GuestMissing: the guest is not built); "
        "runs in it prepare it as they start."
    )


@pytest.fixture
def empty_compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A compiled-guest folder of the test's own, empty: the window must compile it for real."""
    folder = tmp_path / "compiled"
    monkeypatch.setenv(paths.COMPILED_ENV, str(folder))
    return folder


@pytest.fixture
def wasm_window(
    qtbot: QtBot,
    qloop: object,
    memory_keyring: MemoryKeyring,
    wasm_guest: Path,
    scripted_server: ScriptedServer,
) -> Iterator[MainWindow]:
    """A window started with the WebAssembly sandbox chosen in the settings (and a local server,
    so that it opens on the workspace)."""
    prefs = Preferences()
    prefs.set_sandbox_backend("wasm")
    prefs.set_base_url("local", scripted_server.base_url)
    with opened_window(qtbot) as win:
        yield win
        qtbot.waitUntil(lambda: not win.preparation.busy, timeout=120_000)


def test_the_window_prepares_the_wasm_sandbox_in_the_background(
    empty_compiled: Path, wasm_window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    """One real compile (seconds): the window stays responsive, says what it does, a run
    started meanwhile still runs in the WebAssembly sandbox, and the settings page waits."""
    window = wasm_window
    gaps: list[float] = []
    last = [time.monotonic()]

    def tick() -> None:
        now = time.monotonic()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(20)
    label = window.preparation.label
    qtbot.waitUntil(lambda: label.isVisible() and label.text() == PREPARING, timeout=10_000)
    assert window.preparation.busy
    assert not is_prepared(empty_compiled)
    dialog = window.show_settings("sandbox")
    assert dialog.sandbox.level.text() == PREPARING
    dialog.accept()

    scripted_server.respond_with(scripted({QUESTION: [repl(WHERE)]}))
    finished = _run(window, qtbot, scripted_server, timeout_ms=180_000)
    assert (finished.status, finished.answer) == ("completed", "wasi")
    assert finished.sandbox.startswith("wasm+wasmtime")

    qtbot.waitUntil(lambda: not window.preparation.busy, timeout=120_000)
    timer.stop()
    assert is_prepared(empty_compiled)
    assert label.text().startswith("WebAssembly sandbox ready for this machine"), label.text()
    assert max(gaps) < 1.0, f"the window's loop stalled {max(gaps):.2f} s"
    assert label.isVisible()
    finished = _run(window, qtbot, scripted_server)
    assert finished.answer == "wasi"
    assert label.isHidden(), "a run's own lines take the status bar from the ready line"
    dialog = window.show_settings("sandbox")
    page = dialog.sandbox
    qtbot.waitUntil(lambda: page.report is not None, timeout=30_000)
    assert page.level.text().startswith("Model code runs in a WebAssembly Python (wasm+wasmtime")
    dialog.accept()


def _run(
    window: MainWindow, qtbot: QtBot, server: ScriptedServer, timeout_ms: int = 60_000
) -> RunFinished:
    """Ask QUESTION of a memo in the window, as a user does (the memo loaded once); the run's
    end."""
    ws = window.workspace
    if not ws.documents.documents():
        prepare(window, qtbot, server, QUESTION, memos(1))
    ws.answer.clear()
    ws.controls.run_button.click()
    qtbot.waitUntil(lambda: window.starter.running, timeout=5_000)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=timeout_ms)
    finished = ws.model.tree.run.finished
    assert finished is not None
    return finished
