"""The window shows a root reply while the model writes it, and the code of a cell before it ends."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from rlm_desktop.ui.window.main_window import MainWindow
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import Reply, ScriptedServer
from tests.ui.test_end_to_end import memos, prepare

PROSE = "First I will look at how long each memo is, then read the one about the launch. "
SLOW_CELL = "import time\ntime.sleep(1.5)\nprint('slept')"


def test_the_console_grows_as_the_reply_streams_and_shows_the_code_before_its_cell_ends(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    writing = Reply(content=repl(SLOW_CELL, PROSE * 3), chunk_chars=6, chunk_delay_s=0.03)
    scripted_server.respond_with(scripted({"How long are they?": [writing, repl("FINAL('done')")]}))
    prepare(window, qtbot, scripted_server, "How long are they?", memos(1))
    ws = window.workspace
    assert window.start_run()

    def first_card_prose() -> str:
        cards = ws.console.cards
        return cards[0].prose.text() if cards else ""

    qtbot.waitUntil(lambda: len(first_card_prose()) > 20, timeout=20_000)
    early = first_card_prose()
    assert ws.console.cards[0].pending.text() == "the model is writing…"
    qtbot.waitUntil(lambda: len(first_card_prose()) > len(early) + 20, timeout=20_000)
    assert first_card_prose().startswith(early)
    qtbot.waitUntil(lambda: window.status.writing.text().startswith("Writing "), timeout=20_000)
    assert window.status.writing.text().endswith(" tokens/s")

    def code_shown_while_cell_runs() -> bool:
        card = ws.console.cards[0]
        live = card.live_code
        return live is not None and live.isVisible() and live.toPlainText() == SLOW_CELL

    qtbot.waitUntil(code_shown_while_cell_runs, timeout=20_000)
    assert ws.console.cell_views() == []  # the cell has not ended, yet its code shows
    assert ws.console.cards[0].pending.text() == "running code…"

    qtbot.waitUntil(lambda: not window.starter.running, timeout=30_000)
    qtbot.waitUntil(lambda: window.status.writing.text() == "", timeout=10_000)
    card = ws.console.cards[0]
    assert card.live_code is not None
    assert card.live_code.isHidden()  # the cell's own view took its place
    assert [c.code.toPlainText() for c in ws.console.cell_views()[:1]] == [SLOW_CELL]


def test_each_block_of_a_reply_shows_as_it_is_written_then_as_its_cell_runs(
    window: MainWindow, qtbot: QtBot, scripted_server: ScriptedServer
) -> None:
    """Two blocks in one reply (the `default` profile runs both): the console shows the block
    the model is writing, then, once the first cell has its view, the second cell's code while
    it runs, below the first."""
    first, second = "print('one')", SLOW_CELL
    reply = f"{PROSE}\n```repl\n{first}\n```\nthen\n```repl\n{second}\n```"
    writing = Reply(content=reply, chunk_chars=4, chunk_delay_s=0.03)
    scripted_server.respond_with(scripted({"Two blocks?": [writing, repl("FINAL('done')")]}))
    prepare(window, qtbot, scripted_server, "Two blocks?", memos(1))
    controls = window.workspace.controls
    qtbot.waitUntil(lambda: controls.profile.findData("default") >= 0, timeout=10_000)
    controls.profile.setCurrentIndex(controls.profile.findData("default"))
    ws = window.workspace
    assert window.start_run()

    def live_code() -> str:
        cards = ws.console.cards
        live = cards[0].live_code if cards else None
        return live.toPlainText() if live is not None and live.isVisible() else ""

    qtbot.waitUntil(lambda: live_code() == first, timeout=20_000)
    qtbot.waitUntil(lambda: live_code().startswith("import time"), timeout=20_000)
    assert ws.console.cell_views() == []  # still writing: no cell has run

    def second_running() -> bool:
        return [c.code.toPlainText() for c in ws.console.cell_views()] == [first]

    qtbot.waitUntil(second_running, timeout=20_000)
    assert live_code() == second
    card = ws.console.cards[0]
    assert card.live_code is not None
    column = card.layout()
    assert column.indexOf(card.live_code) > column.indexOf(card.prose)
    qtbot.waitUntil(lambda: not window.starter.running, timeout=30_000)
    assert [c.code.toPlainText() for c in ws.console.cell_views()[:2]] == [first, second]
    assert live_code() == ""
