"""Drives a replay: a `ReplayPlayer` on a Qt timer, its moves fed to the workspace's views.

A move's events go through the workspace's `EventBridge`, the path a live run's events take, so
the tree, the console, the details and the status bar render a replay exactly as they render a
live run. Going back rebuilds the view from the run's first event (the selected call stays
selected when it exists at the new moment). The controller knows the workspace only as the
`ReplayedView` it needs, so the workspace can hold it without the two importing each other.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol, cast

from PySide6.QtCore import QObject, QTimer, Signal, SignalInstance

from rlm_desktop.engine.events import Event
from rlm_desktop.review.replay import NORMAL_SPEED, SPEEDS, Move, ReplayPlayer, Speed
from rlm_desktop.ui.replay.bar import ReplayBar

if TYPE_CHECKING:
    from rlm_desktop.ui.bridge.events import EventBridge
    from rlm_desktop.ui.tree.details import DetailPanel
    from rlm_desktop.ui.tree.model import CallTreeModel
    from rlm_desktop.ui.tree.panel import TreePanel

READABLE_S = 45.0
"""How long a run played at a readable pace lasts: its turns and sub-calls come in over this
time, whatever their real pace (a scripted run takes a second or two)."""
TICK_MS = 16
"""How often a playing replay looks for events that fell due."""
EVENTS_PER_TICK = 60
"""At most this many events are delivered per tick, so a burst never stalls the window; a replay
that falls behind catches up over the next ticks."""


class ReplayedView(Protocol):
    """What a replay is shown in (the workspace): the views a live run feeds, and its signals."""

    bridge: EventBridge
    model: CallTreeModel
    tree_panel: TreePanel
    details: DetailPanel
    reviewing: str | None

    @property
    def run_changed(self) -> SignalInstance:
        """Fires after the run's figures changed."""

    @property
    def leave_review(self) -> SignalInstance:
        """Fires when the user goes back to a live run."""

    def begin_view(self, review: str | None = None) -> None:
        """Clear the views, for a new run or to review a saved one."""


class ReplayController(QObject):
    """Replays a saved run in `workspace`; `bar` is the control bar it answers to.

    `available(bool)` says whether a replay is loaded (the window's Replay actions follow it).
    """

    available = Signal(bool)

    def __init__(
        self, workspace: ReplayedView, clock: Callable[[], float] = time.monotonic
    ) -> None:
        assert isinstance(workspace, QObject)
        super().__init__(workspace)
        self.clock = clock
        self.bar = ReplayBar()
        self.bar.hide()
        self.player: ReplayPlayer | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self.tick)
        self._seek_to: float | None = None
        self._seek_timer = QTimer(self)
        self._seek_timer.setSingleShot(True)
        self._seek_timer.setInterval(0)
        self._seek_timer.timeout.connect(self._seek_now)
        self.bar.play_requested.connect(self.toggle)
        self.bar.step_requested.connect(self.step)
        self.bar.speed_chosen.connect(self.set_speed)
        self.bar.seek_requested.connect(self._seek_later)
        workspace.leave_review.connect(self.unload)

    @property
    def workspace(self) -> ReplayedView:
        """The workspace the replay is shown in (the controller's Qt parent: holding it in an
        attribute too would make a reference cycle, freed by the collector on any thread)."""
        return cast("ReplayedView", self.parent())

    def load(self, events: Iterable[Event]) -> None:
        """Show a saved run whole, paused at its end, ready to be played from the start."""
        self._timer.stop()
        if self.bar.chosen_speed() not in SPEEDS:  # a readable pace was made for another run
            self.bar.choose_speed(NORMAL_SPEED)
        self.player = ReplayPlayer(list(events), self.clock)
        self.player.set_speed(self.bar.chosen_speed())
        self.bar.show()
        self.available.emit(True)
        self._apply(self.player.go_to(len(self.player.events)))

    def unload(self) -> None:
        """Stop and forget the replay (back to a live run)."""
        self._timer.stop()
        self._seek_timer.stop()
        self.player = None
        self.bar.hide()
        self.available.emit(False)

    @property
    def playing(self) -> bool:
        """True while the replay plays."""
        return self.player is not None and self.player.playing

    def toggle(self) -> None:
        """Play, or pause if playing."""
        if self.playing:
            self.pause()
        else:
            self.play()

    def play(self) -> None:
        """Play from the moment in view (from the start when at the end)."""
        if self.player is None:
            return
        self._apply(self.player.play())
        if self.player.playing:
            self._timer.start()
        self._show_state()

    def play_readable(self, seconds: float = READABLE_S) -> None:
        """Play from the start at the pace that makes the whole run last `seconds`, the speed
        offered in the bar's list beside the others."""
        if self.player is None or self.player.duration <= 0:
            self.play()
            return
        factor = self.player.duration / seconds
        self.bar.choose_speed(Speed(f"Readable ({seconds:.0f} s)", factor))
        self._apply(self.player.go_to(0))
        self.play()

    def pause(self) -> None:
        """Hold the replay where it is."""
        if self.player is not None:
            self.player.pause()
        self._timer.stop()
        self._show_state()

    def set_speed(self, speed: Speed) -> None:
        """Play on at `speed`."""
        if self.player is not None:
            self.player.set_speed(speed)

    def step(self, step: str) -> None:
        """Pause and step: `next_event`, `previous_event`, `next_turn` or `previous_turn`."""
        if self.player is None:
            return
        moves = {
            "next_event": self.player.step_next,
            "previous_event": self.player.step_previous,
            "next_turn": self.player.next_turn,
            "previous_turn": self.player.previous_turn,
        }
        self._timer.stop()
        self._apply(moves[step]())

    def next_event(self) -> None:
        """Pause and show one more event."""
        self.step("next_event")

    def previous_event(self) -> None:
        """Pause and show one event less."""
        self.step("previous_event")

    def next_turn(self) -> None:
        """Pause at the end of the next turn."""
        self.step("next_turn")

    def previous_turn(self) -> None:
        """Pause at the end of the previous turn."""
        self.step("previous_turn")

    def seek(self, moment: float) -> None:
        """Show the run as it stood `moment` seconds after its start; a playing replay plays on."""
        if self.player is not None:
            self._apply(self.player.seek(moment))

    def tick(self) -> None:
        """Deliver the events that fell due (the timer calls this while playing)."""
        if self.player is None:
            return
        move = self.player.tick(EVENTS_PER_TICK)
        if not self.player.playing:
            self._timer.stop()
        self._apply(move)

    def _seek_later(self, moment: float) -> None:
        # Dragging the scrubber asks many times per frame; only the latest request is served.
        self._seek_to = moment
        self._seek_timer.start()

    def _seek_now(self) -> None:
        if self._seek_to is not None:
            moment, self._seek_to = self._seek_to, None
            self.seek(moment)

    def _apply(self, move: Move) -> None:
        ws = self.workspace
        if move.rebuild:
            selected = ws.tree_panel.selected()
            ws.begin_view(review=ws.reviewing)
            ws.bridge.feed(move.events)
            again = ws.model.tree.nodes.get(selected.call_id) if selected else None
            if again is not None:
                ws.tree_panel.select(again)
        elif move.events:
            ws.bridge.feed(move.events)
        self._set_clock()
        self._show_state()

    def _set_clock(self) -> None:
        """Running calls' clocks read the replay's moment, not the wall clock."""
        player, ws = self.player, self.workspace
        if player is None:
            return
        tree = ws.model.tree
        if player.at_end:
            if tree.run.finished is None and tree.run.started_ts is not None:
                ws.model.close_unfinished()
        else:
            tree.run.closed = True
            tree.run.last_ts = player.start_ts + player.time
            ws.tree_panel.repaint_clocks()
            if ws.details.node is not None and ws.details.node.running:
                ws.details.refresh()
        ws.run_changed.emit()

    def _show_state(self) -> None:
        if self.player is not None:
            self.bar.show_state(self.player)
