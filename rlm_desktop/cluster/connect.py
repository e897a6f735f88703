"""Joining a Ray cluster from this machine, for `eval --ray` and `batch --ray`.

`ADDRESS` is a running cluster's address (`HOST:PORT` of its head, as `ray start --head`
prints it, or a `ray://HOST:PORT` client address); `auto` joins the cluster the environment
names (`RAY_ADDRESS`, or one started on this machine); `local` starts a cluster on this machine
for the command's lifetime. Ray is an optional extra: without it the command says how to add it.
"""

from __future__ import annotations

import logging
import os

from rlm_desktop.engine import ConfigError

RAY_MISSING = "needs Ray, which is not installed here: pip install 'rlm-desktop[cluster]'"


def join(address: str) -> str:
    """Connect this process to the cluster at `address`; returns a one-line description of it.
    `ConfigError` (naming `ray`) when Ray is missing or the cluster cannot be reached."""
    try:
        import ray
    except ImportError:
        raise ConfigError(RAY_MISSING, "ray") from None
    if not ray.is_initialized():
        settings = {"logging_level": logging.WARNING, "log_to_driver": False}
        try:
            if address == "local":
                ray.init(include_dashboard=False, **settings)
            else:
                ray.init(address=address, **settings)
        except (ConnectionError, RuntimeError, ValueError, TimeoutError) as error:
            raise ConfigError(_unreachable(address, error), "ray") from None
    return describe()


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
    """Disconnect (and stop a cluster `local` started)."""
    try:
        import ray
    except ImportError:
        return
    if ray.is_initialized():
        ray.shutdown()
