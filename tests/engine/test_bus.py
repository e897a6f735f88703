"""The event bus: in-order delivery to synchronous listeners and async subscriptions."""

from __future__ import annotations

import asyncio
import logging

import pytest

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.events import Event, ModeChosen, RunFinished, RunStarted, TurnStarted
from tests.engine.scripting import QUERY, make_run, repl, scripted
from tests.scripted_server import ScriptedServer
from tests.synthetic_events import run_finished


def finished(run_id: str = "r") -> RunFinished:
    return run_finished(
        run_id,
        answer="42",
        cost_usd=0.0,
        input_tokens=1,
        output_tokens=1,
        turns=1,
        sub_calls=0,
        max_depth_reached=1,
        wall_s=0.1,
        unpriced=True,
    )


def some_events(count: int) -> list[Event]:
    turns: list[Event] = [TurnStarted(run_id="r", call_id="c1", index=i) for i in range(count)]
    return [ModeChosen(run_id="r", mode="rlm", reason="test"), *turns, finished()]


async def collect(subscription: object) -> list[Event]:
    return [event async for event in subscription]  # type: ignore[attr-defined]


async def test_two_subscribers_and_a_listener_get_every_event_in_order() -> None:
    bus = EventBus()
    heard: list[Event] = []
    bus.add_listener(heard.append)
    first, second = bus.subscribe(), bus.subscribe()
    readers = [asyncio.create_task(collect(s)) for s in (first, second)]
    events = some_events(200)
    for index, event in enumerate(events):
        bus.publish(event)
        if index % 7 == 0:
            await asyncio.sleep(0)
    got = await asyncio.wait_for(asyncio.gather(*readers), 5)
    assert heard == events
    assert got == [events, events]


async def test_a_subscription_sees_only_events_published_after_it() -> None:
    bus = EventBus()
    bus.publish(TurnStarted(run_id="r", call_id="c1", index=0))
    late = bus.subscribe()
    bus.publish(end := finished())
    assert await asyncio.wait_for(collect(late), 5) == [end]


async def test_close_ends_a_subscription_after_what_was_queued() -> None:
    bus = EventBus()
    subscription = bus.subscribe()
    queued = TurnStarted(run_id="r", call_id="c1", index=0)
    bus.publish(queued)
    subscription.close()
    bus.publish(TurnStarted(run_id="r", call_id="c1", index=1))
    assert await asyncio.wait_for(collect(subscription), 5) == [queued]


def test_a_failing_listener_is_logged_and_does_not_stop_delivery(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = EventBus()
    heard: list[Event] = []

    def broken(event: Event) -> None:
        raise RuntimeError("listener bug")

    bus.add_listener(broken)
    bus.add_listener(heard.append)
    events = some_events(3)
    with caplog.at_level(logging.ERROR):
        for event in events:
            bus.publish(event)
    assert heard == events
    assert "listener bug" in caplog.text


def test_a_removed_listener_hears_nothing_more() -> None:
    bus = EventBus()
    heard: list[Event] = []
    remove = bus.add_listener(heard.append)
    first, second = some_events(1)[:2]
    bus.publish(first)
    remove()
    remove()
    bus.publish(second)
    assert heard == [first]


async def test_a_run_delivers_the_same_ordered_events_to_every_subscriber(
    scripted_server: ScriptedServer,
) -> None:
    turns = [repl("x = llm_query_batched(['a', 'b', 'c'])"), repl("FINAL(x)")]
    scripted_server.respond_with(scripted({QUERY: turns}))
    run = make_run(scripted_server)
    heard: list[Event] = []
    run.bus.add_listener(heard.append)
    readers = [asyncio.create_task(collect(run.bus.subscribe())) for _ in range(2)]
    result = await run.execute()
    got = await asyncio.wait_for(asyncio.gather(*readers), 5)

    assert result.status == "completed"
    assert got == [heard, heard]
    assert isinstance(heard[0], RunStarted)
    assert isinstance(heard[-1], RunFinished)
    assert [e.ts for e in heard] == sorted(e.ts for e in heard)
