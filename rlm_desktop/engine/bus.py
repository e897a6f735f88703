"""In-order delivery of engine events to any number of subscribers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from rlm_desktop.engine.events import Event, RunFinished

log = logging.getLogger(__name__)

Listener = Callable[[Event], None]


class Subscription:
    """An async iterator over the events published after it was made; ends after `RunFinished`."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()

    def _put(self, event: Event | None) -> None:
        self._queue.put_nowait(event)

    def close(self) -> None:
        """Stop receiving events; the iterator ends once what was queued is consumed."""
        self._bus._unsubscribe(self)
        self._queue.put_nowait(None)

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while True:
            event = await self._queue.get()
            if event is None:
                return
            yield event
            if isinstance(event, RunFinished):
                return


class EventBus:
    """Publishes events in order: synchronous listeners first, then async subscriptions.

    Synchronous listeners run inside `publish` and must be quick (the store buffers, the Qt bridge
    coalesces). A listener that raises is logged and kept; it never breaks the run.
    """

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._subscriptions: list[Subscription] = []

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event)` for every event; returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def subscribe(self) -> Subscription:
        """A new async subscription; iterate it with `async for`."""
        subscription = Subscription(self)
        self._subscriptions.append(subscription)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    def publish(self, event: Event) -> None:
        """Deliver `event` to every listener and subscription, in publication order."""
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener %r failed on %s", listener, type(event).__name__)
        for subscription in list(self._subscriptions):
            subscription._put(event)
