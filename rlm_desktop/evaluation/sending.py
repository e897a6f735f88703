"""What the evaluation runner and the batch runner share: trials sent through one executor and
one `Dispatcher`, at most `concurrency` at once, each with a grant of one total budget held in
this process (`Allowance`), their events told to listeners, all stopped by `cancel()`.

    class Evaluation(TrialSender[EvaluationEvent]): ...
    await self._send_all([lambda: self._trial(setting, task) for ...])   # in `run()`
    grant = self._grant(floor)           # inside a trial: None when what is left cannot cover it
    self._settle(grant, *spent)          # when it ends, whatever happened
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from rlm_desktop.cluster.dispatch import CredentialsFor, Dispatcher
from rlm_desktop.cluster.runs import LocalRuns, Runs
from rlm_desktop.engine.pricing import PriceBook
from rlm_desktop.evaluation.allowance import Allowance, Grant

if TYPE_CHECKING:
    from rlm_desktop.engine.folders import EngineFolders
    from rlm_desktop.evaluation.options import EvaluationOptions
    from rlm_desktop.store import Store

Event = TypeVar("Event")
Trial = Callable[[], Coroutine[Any, Any, None]]


class TrialSender(Generic[Event]):
    """Sends trials under one concurrency limit and one total budget; `spent` is what earlier
    sittings spent of it (dollars, tokens)."""

    def __init__(
        self,
        store: Store,
        options: EvaluationOptions,
        spent: tuple[float, int],
        *,
        folders: EngineFolders,
        credentials: CredentialsFor,
        runs: Runs | None = None,
    ) -> None:
        self.store = store
        self.runs: Runs = runs or LocalRuns(folders)
        self._dispatcher = Dispatcher(store, self.runs, credentials)
        self.options = options
        self.folders = folders
        self._prices = PriceBook(options.prices)
        self._listeners: list[Callable[[Event], None]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._unfinished = 0
        self.cancelled = False
        self.allowance = Allowance(options.max_cost_usd, options.max_tokens, *spent)

    def add_listener(self, listener: Callable[[Event], None]) -> None:
        """Call `listener` with every event of the trials."""
        self._listeners.append(listener)

    def _publish(self, event: Event) -> None:
        for listener in self._listeners:
            listener(event)

    def cancel(self) -> None:
        """Stop every run now; what has no result yet can be resumed later."""
        self.cancelled = True
        for task in self._tasks:
            task.cancel()

    async def _send_all(self, trials: Sequence[Trial]) -> None:
        """Run `trials`, at most `options.concurrency` at once, until all have ended (or
        `cancel()`), then raise the first error one raised."""
        self.cancelled = False
        self._unfinished = len(trials)
        slots = asyncio.Semaphore(self.options.concurrency)

        async def in_turn(trial: Trial) -> None:
            async with slots:
                await trial()

        self._tasks = [asyncio.create_task(in_turn(trial)) for trial in trials]
        await run_all(self._tasks, self.cancel)

    def _grant(self, floor: tuple[float, int]) -> Grant | None:
        """A grant for a trial whose first call reserves `floor` (dollars, tokens): a fair share
        of what is left among the trials that could run at once, or None when that cannot cover
        it (the trial is then over: it is not started)."""
        sharers = min(self.options.concurrency, self._unfinished)
        grant = self.allowance.grant(sharers, *floor)
        if grant is None:
            self._unfinished -= 1
        return grant

    def _settle(self, grant: Grant, cost_usd: float, tokens: int) -> None:
        """A trial with `grant` ended, having spent `cost_usd` and `tokens`."""
        self._unfinished -= 1
        self.allowance.settle(grant, cost_usd, tokens)


async def run_all(tasks: Sequence[asyncio.Task[None]], cancel: Callable[[], None]) -> None:
    """Wait for the trials' `tasks` to end, then raise the first error one raised (a trial
    cancelled is no error). If the waiting task is cancelled, `cancel` stops the trials, and
    once they have ended the cancellation goes on."""
    if tasks:
        try:
            await asyncio.wait(tasks)
        except asyncio.CancelledError:  # this task was cancelled: stop the runs, then go
            cancel()
            await asyncio.wait(tasks)
            raise
    for task in tasks:
        if not task.cancelled() and (error := task.exception()) is not None:
            raise error
