"""The line under the run fields follows the model and the endpoint as they change, not only at Run.

A notice that names the model ("… on your own server: counted at $0") names the new one once
the model is changed; a red "Cannot connect" is checked again once the endpoint's address is
fixed in the settings, and the new result shows.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.window.main_window import MainWindow
from tests.engine.scripting import closed_port_url
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import memos, prepare


def _after_a_run(window: MainWindow, qtbot: QtBot, server: ScriptedServer) -> QLabel:
    """The line under the fields after a run on the scripted server has ended."""
    server.respond_with(scripted(root=[repl("FINAL('7 zebrafish')")]))
    prepare(window, qtbot, server, "How many zebrafish?", memos(1))
    assert window.start_run()
    qtbot.waitUntil(lambda: not window.starter.running, timeout=60_000)
    return window.workspace.controls.error


def test_the_notice_names_the_model_chosen_after_the_run(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    line = _after_a_run(window, qtbot, scripted_server)
    assert line.text().startswith("openai/test-model on your own server")

    window.workspace.controls.model.setEditText("openai/other-model")
    qtbot.waitUntil(lambda: "other-model" in line.text(), timeout=5_000)
    assert line.text().startswith("openai/other-model on your own server: counted at $0")
    assert "test-model" not in line.text()
    assert line.isVisibleTo(window)


def test_the_notice_goes_when_the_provider_api_is_chosen(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    line = _after_a_run(window, qtbot, scripted_server)
    assert "on your own server" in line.text()

    window.workspace.controls.endpoint.setCurrentIndex(0)  # the provider's own API: not free
    qtbot.waitUntil(lambda: "on your own server" not in line.text(), timeout=5_000)


def test_cannot_connect_is_checked_again_once_the_address_is_fixed(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
    window.prefs.set_base_url("local", closed_port_url())
    window.starter.apply_preferences()
    line = window.workspace.controls.error
    assert window.start_run()
    qtbot.waitUntil(lambda: "connect" in line.text().lower(), timeout=20_000)
    assert line.objectName() == "errorLabel"
    assert not scripted_server.chat_requests()

    window.prefs.set_base_url("local", scripted_server.base_url)  # as Settings → Providers does
    window.starter.apply_preferences(since=window.prefs.run_defaults())
    qtbot.waitUntil(lambda: "connect" not in line.text().lower(), timeout=20_000)
    qtbot.waitUntil(lambda: "counted at $0" in line.text(), timeout=20_000)
    assert line.objectName() == "muted"  # the new result: no problem, the $0 notice
    assert not window.workspace.controls.fix_button.isVisibleTo(window)
    assert not scripted_server.chat_requests()  # checked again, not run


def test_cannot_connect_is_checked_again_and_still_said_for_another_dead_address(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
    first, second = closed_port_url(), closed_port_url()
    window.prefs.set_base_url("local", first)
    window.starter.apply_preferences()
    line = window.workspace.controls.error
    assert window.start_run()
    qtbot.waitUntil(lambda: "connect" in line.text().lower(), timeout=20_000)
    assert first.split("//")[1].split("/")[0] in line.text()

    window.prefs.set_base_url("local", second)
    window.starter.apply_preferences(since=window.prefs.run_defaults())
    address = second.split("//")[1].split("/")[0]
    qtbot.waitUntil(lambda: address in line.text(), timeout=20_000)
    assert line.objectName() == "errorLabel"
