"""A trial on a cluster node: the Ray task that runs one engine `Run` there and streams its
events back to the machine that sent it.

The task is a generator (Ray's streaming returns): it yields `Arrived` (where it runs), then the
run's stored events in small batches as they happen, then `Ended`. The run works in a temporary
folder of the node (its scratch folders and the user's prompt profiles), removed when it ends;
its workers get the node's kernel sandbox, whose level the run's events carry home.
"""

from __future__ import annotations

import asyncio
import os
import queue
import socket
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rlm_desktop import __version__
from rlm_desktop.cluster.runs import RanOn
from rlm_desktop.cluster.sealing import SEALED_KEY_VARIABLE, unseal
from rlm_desktop.engine import ConfigError, ContextDocument, Credentials, Run, RunConfig
from rlm_desktop.engine.events import Event
from rlm_desktop.engine.folders import EngineFolders
from rlm_desktop.engine.profiles import ProfileFolders
from rlm_desktop.engine.run import RunResult
from rlm_desktop.engine.sandbox.untrusted_files import remove_tree

BATCH_INTERVAL_S = 0.1
"""How often the events gathered on the node are sent home (a killed node loses at most this)."""
MAX_BATCH = 200


@dataclass(frozen=True)
class TrialPackage:
    """Everything a node needs for one run, sent as the task's argument (the key apart)."""

    run_id: str
    config: RunConfig
    documents: tuple[ContextDocument, ...]
    profiles: dict[str, str]
    """The user's own prompt profiles: file name (relative to the folder) to text."""
    version: str


@dataclass(frozen=True)
class Arrived:
    """The task started on a node: where, and the rlm-desktop installed there."""

    ran_on: RanOn
    version: str


@dataclass(frozen=True)
class Ended:
    """The run's result; or `refused`, why the engine would not start it (a `ConfigError`); or
    `failure`, why the node could not run it at all."""

    result: RunResult | None = None
    refused: str | None = None
    failure: str | None = None


Message = Arrived | list[Event] | Ended


def run_trial(package: TrialPackage, opener: bytes) -> Iterator[Message]:
    """The body of the Ray task: run `package` here, yielding what happened as it happens."""
    import ray

    context = ray.get_runtime_context()
    here = RanOn(
        "ray",
        host=socket.gethostname(),
        address=ray.util.get_node_ip_address(),
        node_id=context.get_node_id(),
    )
    yield Arrived(here, __version__)
    if package.version != __version__:
        yield Ended(
            failure=f"node {here.host} runs rlm-desktop {__version__} and this machine "
            f"{package.version}: install the same version on every node "
            f"(pip install 'rlm-desktop[cluster]=={package.version}')"
        )
        return
    try:
        credentials = unseal(os.environ.get(SEALED_KEY_VARIABLE, ""), opener)
    except ValueError as error:
        yield Ended(failure=str(error))
        return
    with tempfile.TemporaryDirectory(prefix="rlm-desktop-trial-") as workdir:
        trial = _NodeTrial(package, credentials, _folders(Path(workdir), package.profiles))
        try:
            yield from trial.stream()
        finally:
            trial.stop()
            remove_tree(Path(workdir) / "scratch")


def _folders(workdir: Path, profiles: dict[str, str]) -> EngineFolders:
    from rlm_desktop import paths

    user = workdir / "profiles"
    for name, text in profiles.items():
        target = (user / name).resolve()
        if not target.is_relative_to(user.resolve()):
            continue  # a name that climbs out of the folder is not a profile of the user's
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    scratch = workdir / "scratch"
    scratch.mkdir()
    return EngineFolders(scratch=scratch, profiles=ProfileFolders(paths.resource("profiles"), user))


class _NodeTrial:
    """The run in a thread of its own (with its own event loop); its events in a queue."""

    def __init__(
        self, package: TrialPackage, credentials: Credentials, folders: EngineFolders
    ) -> None:
        self._package = package
        self._credentials = credentials
        self._folders = folders
        self._events: queue.SimpleQueue[Event] = queue.SimpleQueue()
        self._ended: Ended | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._run: Run | None = None
        self._thread = threading.Thread(target=self._main, name="rlm-trial", daemon=True)

    def stream(self) -> Iterator[Message]:
        self._thread.start()
        while self._thread.is_alive() or not self._events.empty():
            batch = self._take()
            if batch:
                yield batch
        yield self._ended or Ended(failure="the run's thread ended without a result")

    def _take(self) -> list[Event]:
        batch: list[Event] = []
        try:
            batch.append(self._events.get(timeout=BATCH_INTERVAL_S))
            while len(batch) < MAX_BATCH:
                batch.append(self._events.get_nowait())
        except queue.Empty:
            pass
        return batch

    def _main(self) -> None:
        try:
            asyncio.run(self._execute())
        except ConfigError as error:
            self._ended = Ended(refused=str(error))
        except Exception as error:  # reported home as the trial's failure, in one line
            self._ended = Ended(failure=f"{type(error).__name__}: {error}")

    async def _execute(self) -> None:
        self._loop = asyncio.get_running_loop()
        package = self._package
        run = Run(
            package.config,
            list(package.documents),
            folders=self._folders,
            credentials=self._credentials,
            run_id=package.run_id,
        )
        run.bus.add_listener(self._keep)
        self._run = run
        self._ended = Ended(result=await run.execute())

    def _keep(self, event: Event) -> None:
        if event.stored:
            self._events.put(event)

    def stop(self) -> None:
        """Cancel the run if it is still going (the task was cancelled) and wait for its end,
        so no worker of it outlives the task."""
        if self._thread.is_alive() and self._loop is not None and self._run is not None:
            self._loop.call_soon_threadsafe(self._run.cancel)
        self._thread.join(timeout=60)
