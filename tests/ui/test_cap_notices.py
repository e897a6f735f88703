"""While a run goes, the status bar says when it passes half and four fifths of a cap."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.ui.test_end_to_end import memos, prepare


def test_passing_four_fifths_of_the_sub_call_cap_is_said(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    said: list[str] = []
    window.status.messageChanged.connect(said.append)
    scripted_server.respond_with(
        scripted(
            root=[
                repl(
                    "parts = llm_query_batched([f'part {i}' for i in range(9)])\nprint(len(parts))"
                ),
                repl("FINAL('nine parts')"),
            ],
            sub="ok",
        )
    )
    prepare(window, qtbot, scripted_server, "How many parts?", memos(1))
    window.workspace.controls.max_sub_calls.setValue(10)
    assert window.start_run()
    qtbot.waitUntil(
        lambda: "nine parts" in window.workspace.answer.text.toPlainText(), timeout=60_000
    )
    assert any(s.startswith("Past 50% of the sub-call cap") for s in said), said
    assert any(s.startswith("Past 80% of the sub-call cap") for s in said), said
    assert window.status.calls.property("warning") is True
    assert window.status.cost.property("warning") is not True
    assert not any("dollar cap" in s for s in said if s.startswith("Past"))
