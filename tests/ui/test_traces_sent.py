"""The window sends each finished run's trace to the OTLP collector named in the settings."""

from __future__ import annotations

import socket

from pytestqt.qtbot import QtBot

from rlm_desktop.ui.settings.dialog import DefaultsPage
from rlm_desktop.ui.window.main_window import MainWindow
from tests.exports.otlp_receiver import OtlpReceiver
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import memos, prepare


def test_a_finished_run_reaches_the_collector(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    receiver = OtlpReceiver().start()
    try:
        window.prefs.set_otlp_endpoint(receiver.endpoint)
        scripted_server.respond_with(
            scripted(
                root=[repl("x = llm_query('how many?')\nprint(x)"), repl("FINAL('7')")], sub="7"
            )
        )
        prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
        assert window.start_run()
        qtbot.waitUntil(lambda: bool(receiver.requests), timeout=60_000)
        qtbot.waitUntil(lambda: "Trace sent" in window.status.currentMessage(), timeout=10_000)
        spans = [
            s
            for rs in receiver.requests[0].resource_spans
            for ss in rs.scope_spans
            for s in ss.spans
        ]
        names = sorted(span.name for span in spans)
        assert names.count("invoke_agent rlm") == 1
        assert "chat test-model" in names
        assert "execute_tool repl" in names
    finally:
        receiver.stop()


def test_a_dead_collector_is_one_status_line(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    window.prefs.set_otlp_endpoint(dead)
    scripted_server.respond_with(scripted(root=[repl("FINAL('7')")]))
    prepare(window, qtbot, scripted_server, "How many zebrafish?", memos(1))
    answer = window.workspace.answer
    assert window.start_run()
    qtbot.waitUntil(lambda: "Traces not sent" in window.status.currentMessage(), timeout=60_000)
    assert "7" in answer.text.toPlainText()
    assert dead in window.status.currentMessage()


def test_the_settings_refuse_a_collector_that_is_not_a_url(
    window: MainWindow, qtbot: QtBot
) -> None:
    page = DefaultsPage(window.prefs, models=["openai/test-model"])
    qtbot.addWidget(page)
    page.otlp.setText("localhost:4318")
    page.save()
    assert "not an http:// or https:// URL" in page.otlp_error.text()
    assert window.prefs.otlp_endpoint == ""
    page.otlp.setText("http://localhost:4318")
    page.save()
    assert page.otlp_error.text() == ""
    assert window.prefs.otlp_endpoint == "http://localhost:4318"
