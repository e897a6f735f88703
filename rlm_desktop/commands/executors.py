"""`--ray ADDRESS|auto|local`: the executor an evaluation or a batch runs its trials with."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlm_desktop.cluster.runs import Runs
    from rlm_desktop.engine.folders import EngineFolders


def add_ray_option(parser: argparse.ArgumentParser) -> None:
    """`--ray ADDRESS|auto|local`."""
    parser.add_argument(
        "--ray",
        metavar="ADDRESS|auto|local",
        help="run each trial as a task on a Ray cluster: its head's HOST:PORT, auto (the one "
        "RAY_ADDRESS names or this machine runs), or local (start one here); needs "
        "pip install 'rlm-desktop[cluster]'",
    )


@contextmanager
def executor(
    address: str | None, folders: EngineFolders, say: Callable[[str], None]
) -> Iterator[Runs]:
    """The local executor, or the Ray cluster at `address` joined for the block's lifetime
    (`ConfigError` naming `ray` when it cannot be).

    While joined, Ray prints the cluster's error messages (a node that died, say) on this
    process's stdout: they are said on stderr instead, with the progress, so that stdout keeps
    only the command's result (print it to the stdout taken before the block).
    """
    from rlm_desktop.cluster.runs import LocalRuns

    if not address:
        yield LocalRuns(folders)
        return
    from rlm_desktop.cluster.connect import join, leave
    from rlm_desktop.cluster.ray_runs import RayRuns

    with redirect_stdout(sys.stderr):
        try:
            say(f"joined {join(address)}")
            yield RayRuns(folders)
        finally:
            leave()
