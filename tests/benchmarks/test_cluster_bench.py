"""Cluster benchmark: trials per minute of the needle task against the scripted server at 250 ms
a request, with the local executor and on a two-node local Ray cluster (a head of one CPU and a
worker node of two), three trials in flight either way; and what Ray adds to one trial (its
task, its worker process, the engine's imports there), from one trial at a time.

Run with `make bench` (or `pytest tests/benchmarks/test_cluster_bench.py -m bench -s`). Both
nodes share this machine's two cores, so the figure is Ray's cost, not a cluster's gain.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from rlm_desktop.cluster.connect import join, leave
from rlm_desktop.cluster.ray_runs import RayRuns
from rlm_desktop.cluster.runs import LocalRuns, Runs
from rlm_desktop.engine import Credentials
from rlm_desktop.engine.folders import EngineFolders
from rlm_desktop.evaluation.opening import create_evaluation
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.settings import Setting
from rlm_desktop.evaluation.task_sets import TaskSpec, generate
from rlm_desktop.paths import profile_folders
from rlm_desktop.store import Store
from tests.benchmarks.report import record_figure
from tests.cluster.conftest import start_cluster, stop_cluster
from tests.evaluation.scripting import GOOD, MODELS, responder
from tests.scripted_server import ScriptedServer

LATENCY_S = 0.25
TRIALS = 12
SINGLE = 4
SPEC = TaskSpec(kinds=("needle",), lengths=(2_000,), seed=11, count=TRIALS)


def trials_wall(home: Path, runs: Runs, api_base: str, count: int, concurrency: int) -> float:
    """Seconds to run `count` needle trials of the good setting, `concurrency` at once."""
    store = Store(home / "sessions.db")
    folders = EngineFolders(scratch=home / "scratch", profiles=profile_folders())
    (home / "scratch").mkdir(parents=True, exist_ok=True)
    options = EvaluationOptions(api_base=api_base, concurrency=concurrency)
    setting = Setting("good", model=f"openai/{GOOD}", mode="rlm", depth=1)
    spec = TaskSpec(kinds=SPEC.kinds, lengths=SPEC.lengths, seed=SPEC.seed, count=count)
    evaluation = create_evaluation(
        store, spec, [setting], options, folders=folders,
        credentials=lambda model, api_base: Credentials(), runs=runs,
    )  # fmt: skip
    started = time.perf_counter()
    results = asyncio.run(evaluation.run())
    wall = time.perf_counter() - started
    store.close()
    assert len(results) == count
    assert all(r.status == "completed" and r.score == 1 for r in results)
    return wall


@pytest.mark.bench
def test_trials_per_minute_here_and_on_a_two_node_ray_cluster(tmp_path: Path) -> None:
    server = ScriptedServer(models=MODELS, latency_s=LATENCY_S).start()
    server.respond_with(responder(generate(SPEC)))
    cluster = start_cluster()
    try:
        folders = EngineFolders(scratch=tmp_path / "scratch", profiles=profile_folders())
        local = LocalRuns(folders)
        trials_wall(tmp_path / "warm-local", local, server.base_url, 3, 3)  # imports done
        here = trials_wall(tmp_path / "local", local, server.base_url, TRIALS, 3)
        here_one = trials_wall(tmp_path / "local-1", local, server.base_url, SINGLE, 1)
        join(cluster.address)
        ray = RayRuns(folders)
        trials_wall(tmp_path / "warm", ray, server.base_url, 3, 3)  # three workers, imports done
        there = trials_wall(tmp_path / "ray", ray, server.base_url, TRIALS, 3)
        there_one = trials_wall(tmp_path / "ray-1", ray, server.base_url, SINGLE, 1)
    finally:
        leave()
        stop_cluster(cluster)
        server.stop()
    record_figure("cluster", "needle trials/min, local executor (3 at once)",
                  f"{60 * TRIALS / here:.1f}", f"{TRIALS} trials, 250 ms a request")  # fmt: skip
    record_figure("cluster", "needle trials/min, 2-node Ray cluster (3 at once)",
                  f"{60 * TRIALS / there:.1f}", f"ratio to local {here / there:.2f}")  # fmt: skip
    record_figure("cluster", "Ray's overhead per trial (one at a time)",
                  f"{(there_one - here_one) / SINGLE:.2f} s",
                  f"trial {here_one / SINGLE:.2f} s here, {there_one / SINGLE:.2f} s as a task")  # fmt: skip
