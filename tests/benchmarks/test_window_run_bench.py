"""The window over a big folder (`make bench`), next to the command line on the same folder.

A folder of 4,000 files of 50 KB (200 MB, `folder_runs.make_folder`) is listed through the
documents pane of the real window (offscreen), then Run is pressed: the scripted server answers
the first request with code that reads every document and names the one holding the planted
line. Measured: the listing, Run to the first request and to the run's end (saved), and the
event loop's worst stall before the first request and after it; then `rlm-desktop run` over the same folder, spawn to the first
request and to its end (the command also loads the folder: that is what a user of it waits for).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from rlm_desktop.ui.window.main_window import MainWindow
from tests.benchmarks.arrival_server import SCAN
from tests.benchmarks.folder_runs import NEEDLE, make_folder, scanning_server, timed_run
from tests.benchmarks.report import record_figure
from tests.benchmarks.test_ui_bench import StallProbe
from tests.scripted_server import ScriptedServer

pytestmark = pytest.mark.bench

MEGABYTES = 200
RUN_TIMEOUT_MS = 600_000


class FirstRequest:
    """A responder that answers with the scan and notes when the first request arrived."""

    def __init__(self) -> None:
        self.arrived: float | None = None
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> str:
        with self._lock:
            if self.arrived is None:
                self.arrived = time.monotonic()
        return SCAN.format(needle=NEEDLE)


def window_run(window: MainWindow, qtbot: QtBot, folder: Path) -> dict[str, float]:
    """List `folder` in the window, press Run; the seconds each step took, and the worst stall."""
    server = ScriptedServer().start()
    first = FirstRequest()
    server.respond_with(first)
    try:
        window.prefs.set_base_url("local", server.base_url)
        window.starter.apply_preferences()
        window.pages.setCurrentWidget(window.workspace)
        ws = window.workspace
        controls = ws.controls
        controls.endpoint.setCurrentIndex(controls.endpoint.findData(server.base_url))
        controls.model.setEditText("openai/test-model")
        controls.mode.setCurrentIndex(controls.mode.findData("rlm"))
        controls.question.setPlainText("Which report?")
        listing = time.monotonic()
        ws.documents.add_paths([folder])
        qtbot.waitUntil(lambda: not ws.documents.loading, timeout=RUN_TIMEOUT_MS)
        listed = time.monotonic() - listing
        before, after = StallProbe(), StallProbe()
        before.start()
        pressed = time.monotonic()
        controls.run_button.click()
        qtbot.waitUntil(lambda: first.arrived is not None, timeout=RUN_TIMEOUT_MS)
        before.stop()
        after.start()
        qtbot.waitUntil(lambda: not window.starter.running, timeout=RUN_TIMEOUT_MS)
        ended = time.monotonic()
        after.stop()
        assert first.arrived is not None
        assert "report-" in ws.answer.text.toPlainText()
        return {
            "listed": listed,
            "first": first.arrived - pressed,
            "whole": ended - pressed,
            "stall before": before.worst() / 1000,
            "stall after": after.worst() / 1000,
        }
    finally:
        server.stop()


def test_a_run_over_a_big_folder_window_and_command_line(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    planted = make_folder(folder, MEGABYTES)
    files = len(list(folder.iterdir()))
    gui = window_run(window, qtbot, folder)
    with scanning_server() as (url, server):
        cli = timed_run(folder, planted, tmp_path / "cli-home", url, server)
    record_figure(
        "window",
        f"{MEGABYTES} MB folder ({files:,} files) listed in the pane",
        f"{gui['listed']:.1f} s",
    )
    record_figure(
        "window",
        f"{MEGABYTES} MB folder: Run to first request / to its end, window vs command line",
        f"{gui['first']:.2f} / {gui['whole']:.2f} s vs "
        f"{cli.first_request_s:.2f} / {cli.whole_s:.2f} s",
        "the window's documents are listed before Run; the command loads them after its start",
    )
    record_figure(
        "window",
        f"{MEGABYTES} MB folder: worst event-loop stall, Run to first request / then to saved",
        f"{gui['stall before'] * 1000:.0f} / {gui['stall after'] * 1000:.0f} ms",
    )
