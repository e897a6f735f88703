"""The Ray executor: every trial a task on a cluster node, its events streamed home.

    join("auto")                                   # connect.join: this process joins the cluster
    runs = RayRuns(folders)
    run = runs.make(config, documents, credentials)
    store.record(run, documents=documents)         # the events are written here as they arrive
    outcome = await run.execute()

A task holds one CPU of its node. Its runtime environment carries the provider key sealed
(`sealing`), opened only inside the running trial, so Ray may reuse a worker process for the
next trial with the same key (a fresh one costs seconds of imports). Ray does not retry a task
itself: the runner retries, once, a trial whose node died (`NodeLost`), as a new session.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlm_desktop import __version__
from rlm_desktop.cluster.node_side import Arrived, Ended, TrialPackage, run_trial
from rlm_desktop.cluster.runs import NodeLost, RanOn, TrialLost, TrialRun
from rlm_desktop.cluster.sealing import SEALED_KEY_VARIABLE, Sealed, Sealer
from rlm_desktop.engine import ConfigError, ContextDocument, Credentials, RunConfig
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.events import BudgetUpdated, RunFinished, RunTotals
from rlm_desktop.engine.pricing import PriceBook, refuse_unpriced_under_cap
from rlm_desktop.engine.profiles import choose_profile
from rlm_desktop.engine.run import RunResult, new_run_id

if TYPE_CHECKING:
    from rlm_desktop.engine.folders import EngineFolders

MAX_PROFILE_BYTES = 1_000_000
"""A file in the user's profile folder larger than this is not a profile: it is not sent."""
NODE_FAILURES = ("NodeDiedError", "WorkerCrashedError", "LocalRayletDiedError", "ObjectLostError")
"""Ray's errors (by name, with their subclasses) that mean the trial's node or worker is gone."""
Placed = Callable[[RanOn], None]


class RayRuns:
    """Makes runs that execute as Ray tasks on the cluster this process has joined."""

    executor = "ray"

    def __init__(self, folders: EngineFolders) -> None:
        import ray

        self.folders = folders
        self._task = ray.remote(num_cpus=1, max_retries=0)(run_trial)
        self._sealer = Sealer()

    def default_concurrency(self) -> int | None:
        """One trial per CPU of the cluster's nodes that are up."""
        import ray

        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def make(
        self,
        config: RunConfig,
        documents: Sequence[ContextDocument],
        credentials: Credentials,
        *,
        run_id: str | None = None,
        attempt: int = 1,
        placed: Placed | None = None,
    ) -> TrialRun:
        """A run of `config` on some node; `ConfigError` here, as a local `Run` would raise
        it, when the engine would refuse it (so no task is sent for it)."""
        config.validate()
        refuse_unpriced_under_cap(config, PriceBook(config.prices))
        choose_profile(
            self.folders.profiles, config.model, config.profile, local_server=bool(config.api_base)
        )
        package = TrialPackage(
            run_id=run_id or new_run_id(),
            config=config,
            documents=tuple(documents),
            profiles=user_profiles(self.folders.profiles.user),
            version=__version__,
        )
        sealed = self._sealer.seal(credentials)
        return RemoteRun(self._task, package, credentials, sealed, attempt=attempt, placed=placed)

    def place_of(self, run: TrialRun) -> RanOn | None:
        """The node the run's task reported from (None if it never started on one)."""
        return run.ran_on if isinstance(run, RemoteRun) else None


def user_profiles(folder: Path) -> dict[str, str]:
    """The text files of the user's profile folder, by name relative to it."""
    found: dict[str, str] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_PROFILE_BYTES:
            try:
                found[path.relative_to(folder).as_posix()] = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue  # the engine reports an unreadable profile where it matters
    return found


class RemoteRun:
    """One trial's task, seen from the machine that sent it: a bus its events are published on
    as they arrive, like a local run's."""

    def __init__(
        self,
        task: Any,
        package: TrialPackage,
        credentials: Credentials,
        sealed: Sealed,
        *,
        attempt: int = 1,
        placed: Placed | None = None,
    ) -> None:
        self.run_id = package.run_id
        self.bus = EventBus()
        self.ran_on: RanOn | None = None
        self._task = task
        self._package = package
        self._credentials = credentials
        self._sealed = sealed
        self._attempt = attempt
        self._placed = placed
        self._generator: Any = None
        self._committed = (0.0, 0)
        self._finished: RunFinished | None = None

    @property
    def credentials(self) -> Credentials:
        """The run's secrets, so the recorder can scrub them from what it writes."""
        return self._credentials

    async def execute(self) -> RunResult:
        """Send the task and publish its events until it ends."""
        import ray

        sealed = self._sealed
        options = {"runtime_env": {"env_vars": {SEALED_KEY_VARIABLE: sealed.ciphertext}}}
        self._generator = self._task.options(**options, num_returns="streaming").remote(
            self._package, sealed.opener
        )
        try:
            async for reference in self._generator:
                ended = self._take(await reference)
                if ended is not None:
                    return self._result(ended)
        except asyncio.CancelledError:
            self.cancel()
            raise
        except ray.exceptions.RayError as error:
            if self._finished is not None:  # the run ended and said so before its node went
                return _result_of(self._finished)
            raise self._lost(error) from None
        raise TrialLost("the trial's task ended without a result", *self._committed)

    def _take(self, message: Any) -> Ended | None:
        if isinstance(message, Arrived):
            self.ran_on = RanOn(**{**message.ran_on.to_json(), "attempt": self._attempt})
            if self._placed is not None:
                self._placed(self.ran_on)
            return None
        if isinstance(message, Ended):
            return message
        for event in message:
            if isinstance(event, BudgetUpdated):
                self._committed = (event.cost_usd, event.tokens)
            elif isinstance(event, RunFinished):
                self._finished = event
            self.bus.publish(event)
        return None

    def _result(self, ended: Ended) -> RunResult:
        if ended.refused is not None:
            raise ConfigError(ended.refused)
        if ended.result is None:
            raise TrialLost(ended.failure or "the node sent no result", *self._committed)
        return ended.result

    def _lost(self, error: Exception) -> TrialLost:
        where = f"node {self.ran_on.label()}" if self.ran_on else "the node it was sent to"
        names = {kind.__name__ for kind in type(error).__mro__}
        if names & set(NODE_FAILURES):
            return NodeLost(f"{where} died mid-trial ({type(error).__name__})", *self._committed)
        first = str(error).strip().splitlines()[-1:] or [type(error).__name__]
        return TrialLost(f"the trial failed on {where}: {first[0]}", *self._committed)

    def cancel(self) -> None:
        """Stop the task: the node cancels its run, so no worker of it is left behind."""
        import ray

        if self._generator is not None:
            ray.cancel(self._generator)


def _result_of(finished: RunFinished) -> RunResult:
    """The result a run's `RunFinished` event tells (what `Run.execute` would have returned)."""
    totals = {field.name: getattr(finished, field.name) for field in dataclasses.fields(RunTotals)}
    return RunResult(session_id=finished.run_id, **totals)
