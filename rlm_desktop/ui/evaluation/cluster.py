"""The executor of the evaluation page's trials: this machine, or a Ray cluster joined and left
off the GUI thread (joining blocks for seconds, starting a `local` one longer). Ray itself is
imported only by `rlm_desktop.cluster`, and only once a cluster is chosen.

Ray retries an address for minutes when something there answers but is no Ray head, so the page
waits `JOIN_TIMEOUT_S` at most; the join goes on in a daemon thread (it cannot be interrupted,
and must not hold up the app's exit), and is left as soon as it ends if nobody waits for it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from rlm_desktop.engine.config import ConfigError
from rlm_desktop.ui.shared.daemon_thread import in_daemon_thread

if TYPE_CHECKING:
    from rlm_desktop.cluster.runs import Runs
    from rlm_desktop.engine.folders import EngineFolders

JOIN_TIMEOUT_S = 60.0


class ClusterLink:
    """The page's hold on a Ray cluster: `executor` joins it, `leave` lets it go, one at a
    time (Ray holds one cluster per process)."""

    def __init__(self) -> None:
        self.joined: str | None = None
        """The address joined, while the page holds a cluster."""
        self.description = ""
        """The joined cluster in one line (`Ray cluster of 2 nodes, 3 CPUs`)."""
        self._turn = asyncio.Lock()

    async def executor(self, address: str | None, folders: EngineFolders) -> Runs:
        """The local executor, or the cluster at `address` joined (`ConfigError` naming `ray`,
        in one line, when Ray is missing, nothing answers there or no head answers in time)."""
        from rlm_desktop.cluster.runs import LocalRuns

        async with self._turn:
            if address is None:
                await self._leave()
                return LocalRuns(folders)
            from rlm_desktop.cluster.ray_runs import RayRuns

            if self.joined != address:
                await self._leave()
                self.description = await self._join(address)
                self.joined = address
            return RayRuns(folders)

    async def _join(self, address: str) -> str:
        from rlm_desktop.cluster.connect import join, leave

        joining = in_daemon_thread(lambda: join(address), "rlm-ray-join")
        try:
            return await asyncio.wait_for(asyncio.shield(joining), JOIN_TIMEOUT_S)
        except (TimeoutError, asyncio.CancelledError) as stopped:
            joining.add_done_callback(partial(_leave_once_joined, leave))
            if isinstance(stopped, asyncio.CancelledError):
                raise
            raise ConfigError(
                f"cannot join the Ray cluster at {address}: no Ray head answered in "
                f"{JOIN_TIMEOUT_S:.0f} s (is it the address `ray start --head` printed?)",
                "ray",
            ) from None

    async def leave(self) -> None:
        """Disconnect from the cluster (stopping one `local` started), if one is joined."""
        async with self._turn:
            await self._leave()

    async def _leave(self) -> None:
        if self.joined is None:
            return
        from rlm_desktop.cluster.connect import leave

        self.joined, self.description = None, ""
        await in_daemon_thread(leave, "rlm-ray-leave")


def _leave_once_joined(leave: Callable[[], None], joining: asyncio.Future[str]) -> None:
    """Leave the cluster a join nobody waits for any more has joined (if it has)."""
    if joining.exception() is None:
        threading.Thread(target=leave, name="rlm-ray-leave", daemon=True).start()
