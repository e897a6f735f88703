"""A workspace over a big folder: what Run does on the window's event loop before the first
request, and what the window keeps of it for the next start.

Pressing Run keeps the workspace's documents for the next start; with thousands of files their
list is megabytes, and it must neither push the user's settings past what the settings file may
hold (all of them would be ignored, then lost at the next write) nor be read back with every
setting. The run's record is made (a write to the session database) and closed (waiting for the
store to write the documents: 1.2 s on 200 MB) off the window's event loop.
"""

from __future__ import annotations

import threading
from pathlib import Path

from pytestqt.qtbot import QtBot

from rlm_desktop import paths
from rlm_desktop.settings_file import MAX_BYTES
from rlm_desktop.store import Recorder, Store
from rlm_desktop.ui.run.starter import RunStarter
from rlm_desktop.ui.shared.preferences import Preferences
from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import memos, prepare

PRICES = "openai/test-model = 0, 0"


def many_documents(count: int) -> list[tuple[str, str]]:
    folder = "/srv/analysts/quarterly-reports/2026/all-regions-and-subsidiaries"
    return [(f"{folder}/report-{n:06d}.txt", f"reports/report-{n:06d}.txt") for n in range(count)]


def test_a_big_workspace_keeps_the_settings_readable(isolated_home: Path) -> None:
    prefs = Preferences()
    prefs.set_prices_text(PRICES)
    documents = many_documents(20_000)
    prefs.set_workspace(prefs.run_defaults(), documents)
    assert (isolated_home / "settings.ini").stat().st_size < MAX_BYTES

    assert Preferences().prices_text() == PRICES
    assert Preferences().workspace_documents() == documents

    prefs.set_workspace(prefs.run_defaults(), documents[:3])
    assert Preferences().workspace_documents() == documents[:3]
    assert Preferences().prices_text() == PRICES


def test_a_workspace_kept_by_an_earlier_version_is_loaded_again(isolated_home: Path) -> None:
    prefs = Preferences()
    documents = many_documents(3)
    prefs.set_many({"workspace/documents": "[" + ", ".join(
        f'["{path}", "{name}"]' for path, name in documents
    ) + "]"})  # fmt: skip
    assert Preferences().workspace_documents() == documents


class ThreadNotingStore(Store):
    """The real store, noting which thread made each run's record and which closed it."""

    recorded_on: list[threading.Thread]
    closed_on: list[threading.Thread]

    def record(self, *args: object, **kwargs: object) -> Recorder:  # type: ignore[override]
        self.recorded_on.append(threading.current_thread())
        return super().record(*args, **kwargs)  # type: ignore[arg-type]

    def recorder_closed(self, recorder: Recorder) -> None:
        self.closed_on.append(threading.current_thread())
        super().recorder_closed(recorder)


def test_the_runs_record_is_made_and_closed_off_the_event_loop(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    scripted_server.respond_with(scripted(root=[repl("FINAL(len(context))")]))
    window.prefs.set_prices_text(PRICES)
    prepare(window, qtbot, scripted_server, "How many memos?", memos(3))
    store = ThreadNotingStore(paths.database_path())
    store.recorded_on, store.closed_on = [], []
    ws = window.workspace
    starter = RunStarter(
        ws.controls, ws.documents, window.status, window.prefs, ws.bridge, lambda: store, window
    )
    assert starter.start()
    qtbot.waitUntil(lambda: ws.answer.isVisible(), timeout=60_000)
    qtbot.waitUntil(lambda: not starter.running, timeout=10_000)
    assert "3" in ws.answer.text.toPlainText()
    assert len(store.recorded_on) == 1
    assert store.recorded_on[0] is not threading.main_thread()
    assert len(store.closed_on) == 1  # closing waits for the documents to be stored
    assert store.closed_on[0] is not threading.main_thread()
    saved = store.list_sessions()
    assert [s["status"] for s in saved] == ["completed"]
    assert len(store.document_texts(saved[0]["id"])) == 3
    starter.close()
