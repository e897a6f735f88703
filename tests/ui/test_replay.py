"""Replay in the window: a saved session plays back through the live tree, console and status
bar, offline (the scripted server is gone), with play/pause, speeds, steps and the scrubber."""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from itertools import accumulate

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rlm_desktop import formatting as fmt
from rlm_desktop.engine.events import Event, TurnExecuted
from rlm_desktop.review.replay import SPEEDS
from rlm_desktop.ui.tree.columns import COLUMNS
from rlm_desktop.ui.window.main_window import MainWindow
from rlm_desktop.ui.window.workspace import Workspace
from tests.review.recorded_runs import (
    FANOUT,
    TURNS,
    HandClock,
    Recorded,
    Script,
    record,
    stored_events,
)

DURATION = COLUMNS.index(next(c for c in COLUMNS if c.ticks))


def recorded(qtbot: QtBot, script: Script) -> Recorded:
    """`script` run by the real engine and recorded, inside the window's event loop."""
    task = asyncio.ensure_future(record(script))
    qtbot.waitUntil(task.done, timeout=60_000)
    return task.result()


def opened(window: MainWindow, session_id: str) -> tuple[Workspace, HandClock]:
    clock = HandClock()
    window.workspace.replay.clock = clock
    assert window.open_session(session_id)
    return window.workspace, clock


def shape(ws: Workspace) -> list[tuple[str, int, str, str]]:
    return [(n.kind, n.level, n.status, n.response) for n in ws.model.tree.walk()]


def test_a_replay_renders_the_live_runs_events_through_the_live_path(
    window: MainWindow, qtbot: QtBot
) -> None:
    run = recorded(qtbot, FANOUT)
    ws, clock = opened(window, run.session_id)
    whole = shape(ws)
    elapsed = window.status.elapsed.text()
    assert ws.answer.isVisible()
    assert ws.replay.bar.isVisible()
    seen: list[Event] = []
    ws.bridge.batch.connect(seen.extend)

    ws.replay.bar.speed.setCurrentIndex(SPEEDS.index(SPEEDS[4]))
    qtbot.mouseClick(ws.replay.bar.play_button, Qt.MouseButton.LeftButton)
    assert ws.replay.playing
    assert ws.replay.bar.play_button.text() == "Pause"
    assert len(ws.model.tree) == 0
    assert not ws.answer.isVisible()
    while ws.replay.playing:
        clock.advance(0.01)
        ws.replay.tick()
    assert run.live == stored_events(run.session_id)
    assert seen == run.played  # the replies stream again, from their arrival records
    assert shape(ws) == whole
    assert ws.answer.isVisible()
    assert window.status.elapsed.text() == elapsed
    assert ws.replay.bar.play_button.text() == "Play"


def test_steps_show_the_run_turn_by_turn_and_event_by_event(
    window: MainWindow, qtbot: QtBot
) -> None:
    run = recorded(qtbot, TURNS)
    events = run.played
    turn_ends = [i + 1 for i, e in enumerate(events) if isinstance(e, TurnExecuted)]
    ws, _clock = opened(window, run.session_id)
    bar = ws.replay.bar
    qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(bar.next_turn_button, Qt.MouseButton.LeftButton)
    assert not ws.replay.playing
    root = ws.model.tree.root
    assert root is not None
    assert ws.console.node is root
    assert root.running
    assert [t.finished for t in root.turns] == [True]
    assert [c.stdout for c in root.turns[0].cells] == ["one\n"]
    assert len(ws.console.cell_views()) == 1
    assert bar.where.text() == (
        f"event {turn_ends[0]} of {len(events)} · turn 1 of 4 · {root.call_id} ended turn 1"
    )  # the step says what it was
    assert not ws.answer.isVisible()

    qtbot.mouseClick(bar.next_turn_button, Qt.MouseButton.LeftButton)
    root = ws.model.tree.root
    assert root is not None
    assert [t.finished for t in root.turns] == [True, True]
    assert len(ws.console.cell_views()) == 2

    qtbot.mouseClick(bar.previous_button, Qt.MouseButton.LeftButton)
    root = ws.model.tree.root
    assert root is not None
    assert ws.console.node is root  # the selection survives the rebuild
    assert [t.finished for t in root.turns] == [True, False]
    assert " · turn 2 of 4 · " in bar.where.text()  # the console shows turn 2 running: so does the bar
    assert ws.replay.player is not None
    assert ws.replay.player.position == turn_ends[1] - 1

    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert ws.replay.player.position == turn_ends[1]
    qtbot.mouseClick(bar.previous_turn_button, Qt.MouseButton.LeftButton)
    assert ws.replay.player.position == turn_ends[0]
    while not ws.replay.player.at_end:
        qtbot.mouseClick(bar.next_button, Qt.MouseButton.LeftButton)
    assert ws.answer.isVisible()
    assert not bar.next_button.isEnabled()


def test_the_scrubber_shows_the_run_as_it_stood_with_its_clock(
    window: MainWindow, qtbot: QtBot
) -> None:
    run = recorded(qtbot, FANOUT)
    events = run.played
    runtime = list(accumulate((e.ts - events[0].ts for e in events), max))
    ws, _clock = opened(window, run.session_id)
    player = ws.replay.player
    assert player is not None
    moment = runtime[-1] / 2
    ws.replay.bar.scrubber.setValue(int(moment * 1000))
    moment = int(moment * 1000) / 1000
    qtbot.waitUntil(lambda: player.position == bisect_right(runtime, moment))
    root = ws.model.tree.root
    assert root is not None
    assert root.running
    assert not ws.answer.isVisible()
    shown = ws.model.data(ws.model.index_of(root, DURATION))
    assert shown == fmt.seconds(events[0].ts + moment - root.started_ts)
    assert ws.replay.bar.clock.text().startswith(fmt.seconds(moment))


def test_the_session_browser_replays_and_leaving_stops_the_replay(
    window: MainWindow, qtbot: QtBot
) -> None:
    run = recorded(qtbot, FANOUT)
    window.workspace.replay.clock = HandClock()
    dialog = window.show_sessions()
    assert dialog.select_id(run.session_id)
    qtbot.mouseClick(dialog.replay_button, Qt.MouseButton.LeftButton)
    ws = window.workspace
    assert ws.reviewing
    assert ws.replay.playing
    play_pause = next(a for a in window.actions() if a.text() == "&Play or pause")
    assert play_pause.isEnabled()
    play_pause.trigger()
    assert not ws.replay.playing
    qtbot.mouseClick(ws.new_run_button, Qt.MouseButton.LeftButton)
    assert ws.replay.player is None
    assert not ws.replay.bar.isVisible()
    assert not play_pause.isEnabled()
    assert ws.controls.isVisible()


def test_a_reopened_session_is_shown_unfiltered(window: MainWindow, qtbot: QtBot) -> None:
    done = recorded(qtbot, FANOUT)
    panel = window.workspace.tree_panel
    panel.filter.setText("no call says this")
    qtbot.wait(400)  # the filter applies once typing settles
    opened(window, done.session_id)
    assert panel.filter.text() == ""
    assert panel.view.model().rowCount() == 1  # the root, with its calls under it
