"""A real Ray cluster on this machine for the cluster executor's tests: a head and a second
worker node, each its own set of Ray processes (raylet, object store, workers), started with
Ray's own multi-node helper and joined by the CLI under test through the head's address."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HEAD_CPUS = 1
WORKER_CPUS = 2


@dataclass
class LocalCluster:
    """A running cluster: its head's `address`, the nodes' ids and the folder Ray writes in."""

    address: str
    head_id: str
    worker_id: str
    temp_dir: Path
    cluster: Any
    worker: Any

    def stop_worker(self) -> None:
        """Kill the worker node's processes at once, as a machine that dies would leave it."""
        self.cluster.remove_node(self.worker, allow_graceful=False)

    def add_worker(self, cpus: int = WORKER_CPUS) -> str:
        """Start another worker node; returns its id."""
        return str(self.cluster.add_node(num_cpus=cpus).node_id)


def start_cluster(head_cpus: int = HEAD_CPUS) -> LocalCluster:
    """A head (`head_cpus`) and a worker node (`WORKER_CPUS`), Ray's files in a fresh folder."""
    from ray.cluster_utils import Cluster

    # Ray's socket paths must stay short: a folder of its own right under /tmp.
    temp_dir = Path(tempfile.mkdtemp(prefix="rayt-", dir="/tmp"))
    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": head_cpus,
            "include_dashboard": False,
            "temp_dir": str(temp_dir),
        },
    )
    worker = cluster.add_node(num_cpus=WORKER_CPUS)
    return LocalCluster(
        address=cluster.address,
        head_id=cluster.head_node.node_id,
        worker_id=worker.node_id,
        temp_dir=temp_dir,
        cluster=cluster,
        worker=worker,
    )


def stop_cluster(local: LocalCluster) -> None:
    local.cluster.shutdown()
    shutil.rmtree(local.temp_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[LocalCluster]:
    """One cluster for the tests that leave it as they found it."""
    local = start_cluster()
    yield local
    stop_cluster(local)


@pytest.fixture
def dying_cluster() -> Iterator[LocalCluster]:
    """A cluster of its own, for a test that kills its worker node: its head runs no trial, so
    every trial runs on the worker until it dies."""
    local = start_cluster(head_cpus=0)
    yield local
    stop_cluster(local)


def ray_files_text(temp_dir: Path) -> str:
    """Everything Ray wrote under `temp_dir` (its logs, its session files), as text."""
    chunks = []
    for path in temp_dir.rglob("*"):
        if path.is_file() and not path.is_symlink():
            try:
                chunks.append(path.read_bytes().decode("utf-8", "replace"))
            except OSError:
                continue
    return "\n".join(chunks)


def said_until(process: subprocess.Popen[str], marker: str) -> str:
    """What the command `process` said on stderr up to the first line holding `marker`
    (`[1/` once a trial finished)."""
    assert process.stderr is not None
    said = []
    for line in process.stderr:
        said.append(line)
        if marker in line:
            break
    return "".join(said)
