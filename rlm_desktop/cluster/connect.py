"""Joining a Ray cluster from this machine, for `eval --ray` and `batch --ray`.

`ADDRESS` is a running cluster's address (`HOST:PORT` of its head, as `ray start --head`
prints it, or a `ray://HOST:PORT` client address); `auto` joins the cluster the environment
names (`RAY_ADDRESS`, or one started on this machine); `local` starts a cluster on this machine
for the command's lifetime, in a folder private to the user (`ray_folder`). Ray is an optional
extra: without it the command says how to add it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Any

from rlm_desktop.cluster.ray_folder import PrivateRayFolder
from rlm_desktop.engine import ConfigError

RAY_MISSING = "needs Ray, which is not installed here: pip install 'rlm-desktop[cluster]'"
JOIN_TIMEOUT_S = 30.0
"""How long joining may take once the head's port answers: Ray waits for minutes on a port where
something answers that is no Ray head."""
PROBE_TIMEOUT_S = 5.0
"""How long the head's port may take to answer: Ray itself retries an address where nothing
listens for minutes before it gives up."""
_started: list[PrivateRayFolder] = []
"""The folder of the cluster `local` started, until `leave` stops it."""


def join(address: str) -> str:
    """Connect this process to the cluster at `address`; returns a one-line description of it.
    `ConfigError` (naming `ray`) when Ray is missing or the cluster cannot be reached."""
    try:
        import ray
    except ImportError:
        raise ConfigError(RAY_MISSING, "ray") from None
    if not ray.is_initialized():
        _probe(address if address != "auto" else os.environ.get("RAY_ADDRESS", ""))
        settings: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
        if address == "local":
            _started.append(PrivateRayFolder.open())
            settings.update(include_dashboard=False, _temp_dir=_started[-1].temp_dir)
        else:
            settings["address"] = address
        try:
            _init_within(ray, address, settings, None if address == "local" else JOIN_TIMEOUT_S)
        except BaseException:
            if address == "local":
                leave()
            raise
    return describe()


def _init_within(ray: Any, address: str, settings: dict[str, Any], timeout_s: float | None) -> None:
    """`ray.init(**settings)`, given up on after `timeout_s` (it goes on in a daemon thread,
    which cannot hold up this process's exit)."""
    failed: list[BaseException] = []

    def init() -> None:
        try:
            ray.init(**settings)
        except BaseException as error:  # handed to the waiting thread
            failed.append(error)

    if timeout_s is None:
        init()  # a cluster started here: Ray wants the main thread for that
    else:
        joining = threading.Thread(target=init, name="rlm-ray-join", daemon=True)
        joining.start()
        joining.join(timeout_s)
        if joining.is_alive():
            raise ConfigError(
                f"cannot join the Ray cluster at {address}: no Ray head answered in "
                f"{timeout_s:.0f} s (is it the address `ray start --head` printed?)",
                "ray",
            )
    if failed:
        refused = failed[0]
        if isinstance(refused, ConnectionError | RuntimeError | ValueError | TimeoutError):
            raise ConfigError(_unreachable(address, refused), "ray") from None
        raise refused


def _probe(address: str) -> None:
    """`ConfigError` when nothing answers at a head's `HOST:PORT` (a client `ray://` address,
    `local` and an empty one are left to Ray)."""
    host, colon, port = address.rpartition(":")
    if address in ("", "local") or "://" in address or not colon or not port.isdigit():
        return
    try:
        with socket.create_connection(
            (host.strip("[]") or "127.0.0.1", int(port)), PROBE_TIMEOUT_S
        ):
            pass
    except OSError as error:
        raise ConfigError(
            f"nothing answers at {address} ({error.strerror or type(error).__name__}): start the "
            "cluster's head there (ray start --head --port PORT) or check the address",
            "ray",
        ) from None


def _unreachable(address: str, error: Exception) -> str:
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if address == "auto" and not os.environ.get("RAY_ADDRESS"):
        return (
            "auto found no cluster: start one with `ray start --head`, set RAY_ADDRESS, "
            f"or give its address ({reason})"
        )
    return f"cannot join the Ray cluster at {address}: {reason}"


def describe() -> str:
    """The joined cluster in one line: its nodes that are up and their CPUs."""
    import ray

    alive = [node for node in ray.nodes() if node.get("Alive")]
    cpus = int(ray.cluster_resources().get("CPU", 0))
    return f"Ray cluster of {len(alive)} node{'s' if len(alive) != 1 else ''}, {cpus} CPUs"


def leave() -> None:
    """Disconnect (and stop a cluster `local` started, removing its folder)."""
    try:
        import ray
    except ImportError:
        return
    if ray.is_initialized():
        ray.shutdown()
    while _started:
        _started.pop().close()
