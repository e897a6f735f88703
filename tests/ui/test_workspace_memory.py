"""The workspace a user left is the one the next start opens: the run settings (the sub-model
too: on a local server, forgetting it sends sub-calls to the root model) and the documents, in
order and under their names; a document that vanished meanwhile is listed as gone."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytestqt.qtbot import QtBot

from rlm_desktop.ui.documents.pane import GONE
from rlm_desktop.ui.window.main_window import MainWindow
from tests.memory_keyring import MemoryKeyring
from tests.qt_fixtures import qloop as qloop
from tests.qt_fixtures import window as window


def test_a_restart_opens_the_workspace_as_it_was_left(
    window: MainWindow,
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    memory_keyring: MemoryKeyring,
    tmp_path: Path,
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n", encoding="utf-8")
    (folder / "b.txt").write_text("beta\n", encoding="utf-8")
    lone = tmp_path / "lone.md"
    lone.write_text("# gamma\n", encoding="utf-8")
    ws = window.workspace
    controls = ws.controls
    controls.model.set_model_id("openai/root-model")
    controls.sub_model.set_model_id("openai/helper-model")
    controls.mode.setCurrentIndex(controls.mode.findData("rlm"))
    controls.max_depth.setValue(3)
    controls.max_turns.setValue(7)
    future = ws.documents.add_paths([folder, lone])
    assert future is not None
    qtbot.waitUntil(lambda: len(ws.documents.model.entries) == 3, timeout=10_000)
    names = [entry.name for entry in ws.documents.model.entries]
    assert names[0].startswith("notes/")  # named inside its folder
    window.close()
    (folder / "b.txt").unlink()

    again = MainWindow(warm_up=False)
    qtbot.addWidget(again)
    again.show()
    restored = again.workspace
    qtbot.waitUntil(lambda: len(restored.documents.model.entries) == 3, timeout=10_000)
    qtbot.waitUntil(lambda: not restored.documents.loading, timeout=10_000)
    chosen = restored.controls.defaults()
    assert (chosen.model, chosen.sub_model, chosen.mode) == (
        "openai/root-model",
        "openai/helper-model",
        "rlm",
    )
    assert (chosen.max_depth, chosen.max_turns) == (3, 7)
    entries = {entry.name: entry for entry in restored.documents.model.entries}
    gone = [entry for entry in entries.values() if not entry.ok]
    assert [entry.error for entry in gone] == [GONE]
    assert gone[0].path == folder / "b.txt"
    loaded = [entry.name for entry in restored.documents.model.entries if entry.ok]
    assert loaded == [name for name in names if not name.endswith("b.txt")]  # names as they were
    assert [d.text for d in restored.documents.documents()] == ["alpha\n", "# gamma\n"]
    again.shutdown()


def test_a_documents_pane_dragged_shut_comes_back_from_the_view_menu(
    window: MainWindow, qtbot: QtBot
) -> None:
    ws = window.workspace
    action = window.documents_action
    assert action in window.menuBar().actions()[2].menu().actions()
    assert action.isChecked()
    ws.main_splitter.moveSplitter(0, 1)  # dragged all the way left: the pane collapses
    qtbot.waitUntil(lambda: not action.isChecked())
    assert not ws.documents_shown()
    window.close()

    again = MainWindow(warm_up=False)  # it stays shut across a restart, and the menu says so
    qtbot.addWidget(again)
    again.show()
    assert not again.documents_action.isChecked()
    again.documents_action.trigger()
    assert again.workspace.documents_shown()
    assert (
        again.workspace.main_splitter.sizes()[0]
        >= again.workspace.documents.minimumSizeHint().width()
    )
    again.shutdown()
