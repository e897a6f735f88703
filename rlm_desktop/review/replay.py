"""Playing a saved run back at a readable pace: the clock, stepping and seeking, with no Qt.

A `ReplayPlayer` holds a run's events (as `Store.replay` reads them back) and a position: how
many of them are in view. Playing moves a run-time clock forward at the chosen speed; stepping
moves by one event or to the end of the next or previous turn; seeking jumps to a moment of the
run. Every move returns a `Move`: the events to deliver after those already in view or, when the
position goes back, the events to rebuild the view from (after clearing it). The window feeds
them through the same path as a live run's events, so a replay is rendered by the live views.

The clock is injected (`time.monotonic` by default), so a test drives the player without sleeping.
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rlm_desktop import formatting as fmt
from rlm_desktop.engine import events as ev
from rlm_desktop.engine.events import Event, LLMResponded, ReplyStreamed, TurnExecuted, TurnStarted

WAIT_CAP_S = 0.2
"""With "skip waits", any quiet stretch of the run longer than this plays in this long."""


@dataclass(frozen=True)
class Speed:
    """A playback speed: run seconds per second, or None to skip waits (played at 1x, every
    quiet stretch cut to `WAIT_CAP_S`)."""

    label: str
    factor: float | None


NORMAL_SPEED = Speed("1x", 1.0)
SPEEDS = (
    Speed("0.25x", 0.25),
    Speed("0.5x", 0.5),  # slower than the run, for an audience to follow
    NORMAL_SPEED,
    Speed("4x", 4.0),
    Speed("16x", 16.0),
    Speed("Skip waits", None),
)


@dataclass(frozen=True)
class Move:
    """What a move of the player asks of the view: `events` to deliver in order; with `rebuild`,
    the view is cleared first and `events` are everything up to the new position."""

    events: Sequence[Event] = ()
    rebuild: bool = False

    def __bool__(self) -> bool:
        return self.rebuild or bool(self.events)


def with_streamed_replies(events: Sequence[Event]) -> list[Event]:
    """`events` with each reply's streaming made again from its arrival record: the
    `ReplyStreamed` pieces a live run showed (and never stored), at the pace they came, so a
    replay shows the reply being written. A reply whose pieces are already there keeps them."""
    streamed = {e.request_id for e in events if isinstance(e, ReplyStreamed)}
    played: list[Event] = []
    for event in events:
        if (
            isinstance(event, LLMResponded)
            and event.arrivals
            and event.content
            and event.request_id not in streamed
        ):
            played.extend(_pieces_of(event))
        played.append(event)
    return played


def _pieces_of(reply: LLMResponded) -> list[Event]:
    points = [(float(at), int(count)) for at, count in reply.arrivals]
    began = reply.ts - points[-1][0]
    pieces: list[Event] = []
    shown = 0
    for at, count in points:
        count = min(count, len(reply.content))
        if count <= shown:
            continue
        pieces.append(
            ReplyStreamed(
                run_id=reply.run_id, ts=min(began + at, reply.ts), call_id=reply.call_id,
                request_id=reply.request_id, text=reply.content[shown:count], characters=count,
                tokens=round(reply.output_tokens * count / len(reply.content)),
            )
        )  # fmt: skip
        shown = count
    return pieces


class ReplayPlayer:
    """Plays `events` (one run's, in their recorded order) back against `clock`.

    The player starts paused with nothing in view (`position` 0, `time` 0). `time` is seconds of
    run time since the first event; `duration` is the run's length.
    """

    def __init__(
        self, events: Sequence[Event], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.events = with_streamed_replies(events)
        self._clock = clock
        self._offsets = _offsets(self.events)
        self._turn_ends = [i + 1 for i, e in enumerate(self.events) if isinstance(e, TurnExecuted)]
        self._turn_starts = [i + 1 for i, e in enumerate(self.events) if isinstance(e, TurnStarted)]
        self.position = 0
        self.playing = False
        self.speed = NORMAL_SPEED
        self._play = _play_offsets(self._offsets, self.speed)
        self._time = 0.0
        self._anchor = 0.0

    @property
    def start_ts(self) -> float:
        """The wall-clock time of the first event (0 for an empty run)."""
        return self.events[0].ts if self.events else 0.0

    @property
    def duration(self) -> float:
        """Seconds from the first event to the last."""
        return self._offsets[-1] if self._offsets else 0.0

    @property
    def at_end(self) -> bool:
        """True when every event is in view."""
        return self.position >= len(self.events)

    @property
    def time(self) -> float:
        """The replay's moment, in run seconds since the first event."""
        if not self.playing:
            return self._time
        watched = _map(self._offsets, self._play, self._time) + self._clock() - self._anchor
        return min(self.duration, _map(self._play, self._offsets, watched))

    @property
    def turns(self) -> int:
        """How many turns (of any call) the run began (one cut short counts too)."""
        return max(len(self._turn_ends), len(self._turn_starts))

    @property
    def turns_done(self) -> int:
        """How many of those turns are in view."""
        return bisect_right(self._turn_ends, self.position)

    @property
    def turns_begun(self) -> int:
        """How many turns have begun in view: the turn the console shows as running counts."""
        return bisect_right(self._turn_starts, self.position)

    @property
    def last_event(self) -> str:
        """What the last event in view was, in words ("" before the first)."""
        return event_words(self.events[self.position - 1]) if self.position else ""

    def play(self) -> Move:
        """Start playing from the current moment; from the end, start over (a rebuild)."""
        move = Move()
        if self.at_end:
            move = self._go(0, 0.0)
        self._time = self.time
        self._anchor = self._clock()
        self.playing = bool(self.events)
        return move

    def pause(self) -> None:
        """Stop the clock where it is."""
        self._time = self.time
        self.playing = False

    def set_speed(self, speed: Speed) -> None:
        """Play on at `speed` from the current moment."""
        self._time = self.time
        self._anchor = self._clock()
        self.speed = speed
        self._play = _play_offsets(self._offsets, speed)

    def tick(self, limit: int | None = None) -> Move:
        """The events that fell due since the last tick (at most `limit` of them, the rest come
        with the next ticks); playing stops once the last event is in view."""
        if not self.playing:
            return Move()
        now = self.time
        due = bisect_right(self._offsets, now)
        end = due if limit is None else min(due, self.position + limit)
        events = self.events[self.position : end] if end > self.position else []
        self.position = max(self.position, end)
        if self.at_end:
            self._time = self.duration
            self.playing = False
        return Move(events)

    def step_next(self) -> Move:
        """Pause and bring the next event into view."""
        return self.go_to(self.position + 1)

    def step_previous(self) -> Move:
        """Pause and take the last event in view out of it."""
        return self.go_to(self.position - 1)

    def next_turn(self) -> Move:
        """Pause at the end of the next turn of any call (or at the run's end)."""
        later = bisect_right(self._turn_ends, self.position)
        target = self._turn_ends[later] if later < len(self._turn_ends) else len(self.events)
        return self.go_to(target)

    def previous_turn(self) -> Move:
        """Pause at the end of the turn before the one in view (or at the start)."""
        earlier = bisect_left(self._turn_ends, self.position) - 1
        return self.go_to(self._turn_ends[earlier] if earlier >= 0 else 0)

    def seek(self, moment: float) -> Move:
        """Show the run as it stood `moment` run seconds after its first event; playing goes on
        from there."""
        moment = min(max(0.0, moment), self.duration)
        move = self._go(bisect_right(self._offsets, moment), moment)
        self._anchor = self._clock()
        return move

    def go_to(self, position: int) -> Move:
        """Pause with exactly the first `position` events in view."""
        position = min(max(0, position), len(self.events))
        self.playing = False
        return self._go(position, self._offsets[position - 1] if position else 0.0)

    def _go(self, position: int, moment: float) -> Move:
        if position >= self.position:
            move = Move(self.events[self.position : position])
        else:
            move = Move(self.events[:position], rebuild=True)
        self.position, self._time = position, moment
        return move


def _offsets(events: Sequence[Event]) -> list[float]:
    """Each event's run time, never going back (events from concurrent tasks can be a hair out
    of order)."""
    offsets: list[float] = []
    latest = 0.0
    start = events[0].ts if events else 0.0
    for event in events:
        latest = max(latest, event.ts - start)
        offsets.append(latest)
    return offsets


def _play_offsets(offsets: Sequence[float], speed: Speed) -> list[float]:
    """Each event's moment in play time (seconds of watching) at `speed`."""
    if speed.factor is not None:
        return [offset / speed.factor for offset in offsets]
    played: list[float] = []
    previous = 0.0
    for offset in offsets:
        gap = offset - previous
        played.append((played[-1] if played else 0.0) + min(gap, WAIT_CAP_S))
        previous = offset
    return played


def _map(source: Sequence[float], target: Sequence[float], value: float) -> float:
    """`value` on the `source` scale, read on the `target` scale: both are non-decreasing and
    matched point by point, linear between points and held at either end."""
    right = bisect_right(source, value)
    if right == 0:
        return target[0] if target else value
    if right == len(source):
        return target[-1]
    left = right - 1
    span_source = source[right] - source[left]
    span_target = target[right] - target[left]
    if span_source <= 0:
        return target[left]
    return target[left] + (value - source[left]) * span_target / span_source


def event_words(event: Event) -> str:
    """One event as a person would say it, for a replay that steps event by event."""
    match event:
        case ev.RunStarted():
            return "the run started"
        case ev.CallStarted():
            return f"{event.call_id} started ({event.kind} call, depth {event.depth})"
        case ev.TurnStarted():
            return f"{event.call_id} began turn {event.index + 1}"
        case ev.LLMRequestSent():
            return f"{event.call_id} asked {fmt.model_name(event.model)}"
        case ev.ReplyStreamed():
            return f"{event.call_id}'s reply came in"
        case LLMResponded():
            if event.error:
                return f"{event.call_id}'s request failed: {fmt.one_line(event.error, 80)}"
            return f"{event.call_id} got its reply ({fmt.plural(event.output_tokens, 'token')})"
        case ev.LLMRetried():
            return f"{event.call_id}'s request is sent again (attempt {event.attempt})"
        case ev.CellExecuted():
            ran = "raised an error" if event.error else "ran"
            return f"{event.call_id}'s cell {ran}"
        case TurnExecuted():
            return f"{event.call_id} ended turn {event.index + 1}"
        case ev.AnswerSubmitted():
            return f"{event.call_id} submitted its answer ({event.source})"
        case ev.CallFinished():
            return f"{event.call_id} ended: {fmt.status_text(event.status)}"
        case ev.RunFinished():
            return f"the run ended: {fmt.status_text(event.status)}"
        case ev.BudgetUpdated():
            return "the budget's figures were updated"
    name = type(event).__name__
    return "".join(f" {c.lower()}" if c.isupper() else c for c in name).strip()
