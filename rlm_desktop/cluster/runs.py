"""What the evaluation and the batch runner ask of an executor: a run to record and await.

runs = LocalRuns(paths.engine_folders())       # or cluster.ray_runs.RayRuns(...)
run = runs.make(config, documents, credentials)
recorder = store.record(run, documents=documents)
outcome = await run.execute()                   # NodeLost: its node died; try it again once
place = runs.place_of(run)                      # where it ran, for the session's `ran_on`
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from rlm_desktop.engine import ContextDocument, Credentials, Run, RunConfig
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.folders import EngineFolders
from rlm_desktop.engine.run import RunResult


@dataclass(frozen=True)
class RanOn:
    """Where a run ran: `executor` is `local` or `ray`; `node_id` is the Ray node's id (empty
    for the local executor), `host` and `address` the machine's name and IP address."""

    executor: str
    host: str
    address: str = ""
    node_id: str = ""
    attempt: int = 1
    """1, or 2 for the retry of a trial whose node died."""

    def label(self) -> str:
        """A short name for lists and progress lines: `local`, or `ray host (node 3fa2c1d0)`."""
        if self.executor == "local":
            return "local"
        return f"ray {self.host or self.address} (node {self.node_id[:8]})"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record, read back by `from_json`."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RanOn:
        """The place `to_json` recorded (unknown keys, from a later version, ignored)."""
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)


class TrialLost(Exception):
    """A run could not be carried out where it was sent (its result never came back); the
    message says why in one line. `spent_usd` and `spent_tokens` are what it had committed when
    it was last heard from, reservations for calls in flight included."""

    def __init__(self, message: str, spent_usd: float = 0.0, spent_tokens: int = 0) -> None:
        super().__init__(message)
        self.spent_usd = spent_usd
        self.spent_tokens = spent_tokens


class NodeLost(TrialLost):
    """The node (or the worker process) running the trial died before it ended."""


class TrialRun(Protocol):
    """A run as the runners use it: what `Store.record` attaches to, and `execute`/`cancel`."""

    run_id: str
    bus: EventBus

    @property
    def credentials(self) -> Credentials:
        """The run's secrets, so the recorder can scrub them from what it writes."""
        ...

    async def execute(self) -> RunResult:
        """Run to the end; `TrialLost` (or `NodeLost`) when the result cannot come back."""
        ...

    def cancel(self) -> None:
        """Stop the run; `execute` then returns a cancelled result or raises."""
        ...


class Runs(Protocol):
    """An executor: makes the runs of trials and says where each ran."""

    executor: str
    """`local` or `ray`."""

    def default_concurrency(self) -> int | None:
        """How many trials to keep in flight when the user did not say (None: the runner's)."""
        ...

    def make(
        self,
        config: RunConfig,
        documents: Sequence[ContextDocument],
        credentials: Credentials,
        *,
        run_id: str | None = None,
        attempt: int = 1,
        placed: Callable[[RanOn], None] | None = None,
    ) -> TrialRun:
        """A run of `config` over `documents` (`attempt` 2 for a retry); `placed` is told where
        it runs once a node reports it (where that is known at once, `place_of` says it).
        `ConfigError` when the engine refuses it."""
        ...

    def place_of(self, run: TrialRun) -> RanOn | None:
        """Where `run` ran (None when it is not known: it never reached a node)."""
        ...


class LocalRuns:
    """The local executor: every run in this process, its workers on this machine."""

    executor = "local"

    def __init__(self, folders: EngineFolders) -> None:
        self.folders = folders
        self._here = RanOn("local", host=socket.gethostname())

    def default_concurrency(self) -> int | None:
        """The runner's own default."""
        return None

    def make(
        self,
        config: RunConfig,
        documents: Sequence[ContextDocument],
        credentials: Credentials,
        *,
        run_id: str | None = None,
        attempt: int = 1,
        placed: Callable[[RanOn], None] | None = None,
    ) -> TrialRun:
        """An engine `Run`, as `rlm-desktop run` makes it."""
        return Run(config, documents, folders=self.folders, credentials=credentials, run_id=run_id)

    def place_of(self, run: TrialRun) -> RanOn | None:
        """This machine."""
        return self._here
