"""Starts engine runs from the GUI, records them, and stops them.

The engine is imported here, at the moment a run starts, never at start-up (it pulls in litellm,
which takes seconds). Events reach the window only through the `EventBridge`; the store records
the same events through its own bus listener.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from rlm_desktop import paths
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.ui.bridge.events import EventBridge
from rlm_desktop.ui.run.controls import describe_config_error

if TYPE_CHECKING:
    from rlm_desktop.documents import Document
    from rlm_desktop.engine import ContextDocument, Run, RunConfig
    from rlm_desktop.store import Recorder, Store

log = logging.getLogger(__name__)


class RunController(QObject):
    """Owns at most one live run at a time.

    `started` carries the run's id, `finished` its `RunResult` (None when it was cancelled or
    failed), `failed` a one-line message for a run that raised.
    """

    started = Signal(str)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(
        self, bridge: EventBridge, store: Store | None, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.store = store
        self.run: Run | None = None
        self.task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """True while a run is in progress."""
        return self.task is not None and not self.task.done()

    async def start(
        self, config: RunConfig, documents: Sequence[Document], api_key: str | None
    ) -> str:
        """Start a run of `config` over `documents`; returns its id (the session id).

        The store's record of the run is made in a worker thread (it writes to the session
        database, which another process may hold locked for seconds), so the window stays
        responsive meanwhile.
        Raises `ValueError` subclasses (the engine's `ConfigError`) for settings that cannot
        work, and the store's `StoreError` when the run cannot be recorded.
        """
        if self.running:
            raise RuntimeError("a run is already in progress: stop it first")
        from rlm_desktop.engine import Credentials, Run

        config.validate()
        contexts = [document.to_context() for document in documents]
        run = Run(
            config,
            contexts,
            folders=paths.engine_folders(),
            credentials=Credentials(api_key=api_key),
        )
        run.bus.add_listener(self.bridge.push)
        recorder = await _recorded(self.store, run, contexts) if self.store is not None else None
        self.run = run
        self.task = asyncio.ensure_future(self._execute(run, recorder))
        self.started.emit(run.run_id)
        return run.run_id

    async def _execute(self, run: Run, recorder: Recorder | None) -> None:
        result = None
        try:
            result = await run.execute()
        except asyncio.CancelledError:
            log.info("run %s was cancelled", run.run_id)
        except ConfigError as exc:
            self.failed.emit(describe_config_error(exc))
        except Exception as exc:
            log.exception("run %s failed", run.run_id)
            self.failed.emit(f"The run failed: {type(exc).__name__}: {exc}")
        finally:
            self.bridge.flush()
            if recorder is not None:
                # Closing waits for the store's writing thread to store the run's documents
                # (a second over 200 MB): in a worker thread, the window keeps painting.
                await asyncio.to_thread(recorder.close)
        if result is not None and recorder is not None and recorder.warnings:
            warnings = [*result.warnings, *recorder.warnings]
            result = dataclasses.replace(result, warnings=warnings)
        self.finished.emit(result)

    def cancel(self) -> None:
        """Stop the whole tree; the engine ends the run as `cancelled` within about a second."""
        if self.running and self.run is not None:
            self.run.cancel()

    async def wait(self, timeout_s: float = 5.0) -> None:
        """Wait for the run to end (cancelling the task if the engine takes too long)."""
        task = self.task
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout_s)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def _recorded(store: Store, run: Run, documents: list[ContextDocument]) -> Recorder:
    """`store.record(run, documents)`, made in a worker thread; a start stopped meanwhile
    closes the record once it is made (it holds nothing yet)."""
    making = asyncio.ensure_future(asyncio.to_thread(store.record, run, documents=documents))
    try:
        return await asyncio.shield(making)
    except asyncio.CancelledError:
        making.add_done_callback(_close_unused)
        raise


def _close_unused(made: asyncio.Future[Recorder]) -> None:
    if not made.cancelled() and made.exception() is None:
        made.result().close()
