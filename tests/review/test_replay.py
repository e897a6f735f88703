"""The replay player, driven by a hand-turned clock over sessions the real engine recorded:
it gives back the live run's events in their order, at each speed in its share of the time,
and steps, seeks and pauses as a presenter expects."""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

import pytest

from rlm_desktop.engine.events import (
    CallFinished,
    CallStarted,
    Event,
    LLMResponded,
    ReplyStreamed,
    TurnExecuted,
)
from rlm_desktop.review.call_tree import CallTree
from rlm_desktop.review.replay import SPEEDS, WAIT_CAP_S, ReplayPlayer
from tests.review.recorded_runs import FANOUT, LOOP, TURNS, HandClock, record, stored_events

QUARTER, HALF, ONE, FOUR, SIXTEEN, SKIP_WAITS = SPEEDS


def offsets(events: list[Event]) -> list[float]:
    """Each event's run time, as the recorded timestamps give it (never going back)."""
    return list(accumulate((e.ts - events[0].ts for e in events), max))


def play_through(player: ReplayPlayer, clock: HandClock, limit: int | None = None) -> list[Event]:
    delivered: list[Event] = []
    while player.playing:
        clock.advance(0.01)
        move = player.tick(limit)
        assert not move.rebuild
        delivered.extend(move.events)
    return delivered


async def test_playing_back_gives_the_live_events_in_their_order() -> None:
    recorded = await record(FANOUT)
    stored = stored_events(recorded.session_id)
    assert stored == recorded.live
    clock = HandClock()
    player = ReplayPlayer(stored, clock)
    player.set_speed(SIXTEEN)
    player.play()
    played = play_through(player, clock, limit=5)
    assert played == recorded.played
    replies = [e for e in played if isinstance(e, LLMResponded)]
    for reply in replies:  # each reply is written again, piece by piece, before it is answered
        pieces = [
            e for e in played if isinstance(e, ReplyStreamed) and e.request_id == reply.request_id
        ]
        assert "".join(e.text for e in pieces) == reply.content
        assert played.index(pieces[-1]) < played.index(reply)
    assert player.at_end
    assert not player.playing
    assert player.time == player.duration


async def test_each_speed_plays_the_run_in_its_share_of_the_time() -> None:
    events = (await record(LOOP)).played
    runtime = offsets(events)
    # A moment between two events half-way through the run.
    k = next(i for i in range(len(events) // 2, len(events) - 1) if runtime[i] < runtime[i + 1])
    moment = (runtime[k] + runtime[k + 1]) / 2
    for speed in (QUARTER, HALF, ONE, FOUR, SIXTEEN):
        assert speed.factor is not None
        clock = HandClock()
        player = ReplayPlayer(events, clock)
        player.set_speed(speed)
        player.play()
        clock.advance(moment / speed.factor)
        assert list(player.tick().events) == events[: k + 1]
        assert player.position == bisect_right(runtime, moment) == k + 1
        assert player.time == pytest.approx(moment)


async def test_skip_waits_cuts_every_quiet_stretch_short() -> None:
    events = (await record(FANOUT)).played
    runtime = offsets(events)
    gaps = [0.0] + [b - a for a, b in zip(runtime, runtime[1:], strict=False)]
    longest = max(range(len(gaps)), key=gaps.__getitem__)
    assert gaps[longest] > WAIT_CAP_S  # the worker's start and the sub-calls' replies take longer
    played = list(accumulate(min(gap, WAIT_CAP_S) for gap in gaps))
    clock = HandClock()
    player = ReplayPlayer(events, clock)
    player.set_speed(SKIP_WAITS)
    player.play()
    clock.advance(played[longest] - WAIT_CAP_S / 2)
    player.tick()
    assert player.position == longest
    clock.advance(played[-1] - played[longest] + WAIT_CAP_S)
    player.tick()
    assert player.at_end
    assert played[-1] < player.duration


async def test_steps_by_event_and_by_turn() -> None:
    events = (await record(TURNS)).played
    turn_ends = [i + 1 for i, e in enumerate(events) if isinstance(e, TurnExecuted)]
    assert len(turn_ends) == 4
    player = ReplayPlayer(events, HandClock())
    player.play()
    first = player.step_next()
    assert not player.playing
    assert (list(first.events), first.rebuild) == (events[:1], False)
    assert list(player.step_next().events) == events[1:2]
    back = player.step_previous()
    assert (list(back.events), back.rebuild, player.position) == (events[:1], True, 1)

    to_turn = player.next_turn()
    assert list(to_turn.events) == events[1 : turn_ends[0]]
    assert isinstance(to_turn.events[-1], TurnExecuted)
    assert player.turns_done == 1
    player.next_turn()
    assert (player.position, player.turns_done) == (turn_ends[1], 2)
    back = player.previous_turn()
    assert (list(back.events), back.rebuild) == (events[: turn_ends[0]], True)
    back = player.previous_turn()
    assert (list(back.events), back.rebuild, player.position) == ([], True, 0)
    assert not player.step_previous()

    player.go_to(turn_ends[-1])
    to_end = player.next_turn()
    assert list(to_end.events) == events[turn_ends[-1] :]
    assert player.at_end
    assert not player.step_next()


async def test_seeking_back_rebuilds_the_run_as_it_stood() -> None:
    events = (await record(FANOUT)).played
    runtime = offsets(events)
    clock = HandClock()
    player = ReplayPlayer(events, clock)
    player.go_to(len(events))
    started = [e for e in events if isinstance(e, CallStarted) and e.parent_id is not None]
    moment = started[-1].ts - events[0].ts  # every sub-call has been dispatched, none is back
    back = player.seek(moment)
    assert back.rebuild
    assert list(back.events) == events[: bisect_right(runtime, moment)]
    assert player.time == moment
    tree = CallTree()
    tree.apply(back.events)
    finished = {e.call_id for e in back.events if isinstance(e, CallFinished)}
    expected = {e.call_id for e in back.events if isinstance(e, CallStarted)} - finished
    assert {n.call_id for n in tree.walk() if n.running} == expected
    assert {e.call_id for e in started} <= expected

    forward = player.seek(player.duration)
    assert not forward.rebuild
    assert list(forward.events) == events[len(back.events) :]


async def test_pause_holds_the_clock_and_a_new_speed_plays_on_from_the_same_moment() -> None:
    events = (await record(FANOUT)).played
    # The sub-calls alone take 0.3 s, after the root's first turn: the run lasts longer than the
    # 0.3 s of it this test plays.
    assert offsets(events)[-1] > 0.3
    clock = HandClock()
    player = ReplayPlayer(events, clock)
    player.play()
    clock.advance(0.1)
    assert player.time == pytest.approx(0.1)
    player.set_speed(FOUR)
    clock.advance(0.05)
    assert player.time == pytest.approx(0.3)
    player.tick()
    held = player.position
    player.pause()
    clock.advance(60)
    assert not player.tick()
    assert (player.position, player.time) == (held, pytest.approx(0.3))


async def test_a_burst_is_delivered_a_slice_per_tick_and_play_restarts_from_the_end() -> None:
    events = (await record(LOOP)).played
    clock = HandClock()
    player = ReplayPlayer(events, clock)
    player.play()
    clock.advance(player.duration + 1)
    assert list(player.tick(limit=3).events) == events[:3]
    assert list(player.tick(limit=3).events) == events[3:6]
    assert play_through(player, clock) == events[6:]
    again = player.play()
    assert (list(again.events), again.rebuild, player.position) == ([], True, 0)
    assert player.playing


def test_an_empty_run_never_plays() -> None:
    player = ReplayPlayer([], HandClock())
    assert not player.play()
    assert not player.playing
    assert (player.duration, player.turns, player.at_end) == (0.0, 0, True)
