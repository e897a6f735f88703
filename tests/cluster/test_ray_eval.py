"""`rlm-desktop eval --ray` against a real two-node Ray cluster on this machine and the scripted
server: the scores a local evaluation gets, every trial a session of the local store with the
node it ran on, a total budget that holds with trials in flight on both nodes, a node killed
mid-evaluation that costs at most a retry, and a cluster nobody runs said in one line."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.evaluation.task_sets import TaskSpec, generate
from rlm_desktop.evaluation.tasks import Task
from tests.cli import run_cli, start_cli
from tests.cluster.conftest import LocalCluster, said_until
from tests.evaluation.scripting import MODELS, PRICES, numeric_tasks_file, responder
from tests.scripted_server import ScriptedServer

GOOD_SETTING = "good:model=openai/good-model,mode=rlm,depth=1"
BAD_SETTING = "bad:model=openai/bad-model,mode=direct"
SLOW_S = 0.25
"""The scripted server's latency per request."""
DYING_SLOW_S = 1.5
"""Its latency where a node is killed: a trial in flight then has seconds to go."""


def task_set(folder: Path, needles: int) -> tuple[list[str], list[Task]]:
    tasks_file = numeric_tasks_file(folder)
    spec = TaskSpec(kinds=("needle", str(tasks_file)), lengths=(300,), seed=5, count=needles)
    flags = ["--task", "needle", "--task", str(tasks_file), "--length", "300", "--seed", "5",
             "--count", str(needles)]  # fmt: skip
    return flags, generate(spec)


def eval_args(server: ScriptedServer, flags: list[str], *more: str) -> list[str]:
    return ["eval", *flags, "--setting", GOOD_SETTING, "--setting", BAD_SETTING,
            "--api-base", server.base_url, *PRICES, *more]  # fmt: skip


def query(home: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(home / "sessions.db") as db:
        return list(db.execute(sql, params).fetchall())


def trial_places(home: Path) -> list[dict[str, Any]]:
    """The `ran_on` of every session the evaluation tagged (None where none was recorded)."""
    rows = query(
        home,
        "SELECT s.ran_on FROM evaluation_sessions e LEFT JOIN sessions s ON s.id = e.session_id",
    )
    return [json.loads(ran_on) if ran_on else {} for (ran_on,) in rows]


def by_setting(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in summary["settings"]}


@pytest.fixture
def server() -> Any:
    server = ScriptedServer(models=MODELS, latency_s=SLOW_S).start()
    yield server
    server.stop()


def test_an_evaluation_on_the_cluster_scores_as_it_does_here(
    ray_cluster: LocalCluster, server: ScriptedServer, tmp_path: Path
) -> None:
    flags, tasks = task_set(tmp_path / "tasks", needles=2)
    server.respond_with(responder(tasks))
    summaries = {}
    for executor, more in (("local", []), ("ray", ["--ray", ray_cluster.address])):
        home = tmp_path / executor
        done = run_cli(*eval_args(server, flags, "--max-cost", "5", "--json", *more),
                       home=home, timeout=400)  # fmt: skip
        assert done.returncode == 0, done.stderr
        summaries[executor] = json.loads(done.stdout)
        assert summaries[executor]["executor"] == executor
    here, there = by_setting(summaries["local"]), by_setting(summaries["ray"])
    for name in ("good", "bad"):
        for key in ("runs", "failures", "score_mean", "score_ci95", "source_gold_share"):
            assert there[name][key] == here[name][key], (name, key)
    assert there["good"]["score_mean"] == 1.0

    home = tmp_path / "ray"
    places = trial_places(home)
    assert len(places) == 2 * len(tasks)
    assert {p["executor"] for p in places} == {"ray"}
    assert {p["node_id"] for p in places} <= {ray_cluster.head_id, ray_cluster.worker_id}
    assert {p["attempt"] for p in places} == {1}
    rows = query(home, "SELECT node, executor, attempts, status FROM evaluation_results")
    assert all(node.startswith("ray ") and ex == "ray" and n == 1 for node, ex, n, _ in rows)
    sandboxes = query(home, "SELECT DISTINCT s.sandbox FROM sessions s JOIN evaluation_sessions e"
                      " ON e.session_id = s.id WHERE e.setting = 'good'")  # fmt: skip
    assert sandboxes
    assert all(level and level != "unused" for (level,) in sandboxes)
    (session_id,) = query(home, "SELECT session_id FROM evaluation_sessions LIMIT 1")[0]
    shown = run_cli("sessions", "show", session_id, "--json", home=home)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["session"]["ran_on"]["executor"] == "ray"
    health = run_cli("sessions", "health", session_id, home=home)
    assert health.returncode == 0, health.stderr


def test_the_budget_holds_with_trials_in_flight_on_both_nodes(
    ray_cluster: LocalCluster, server: ScriptedServer, tmp_path: Path
) -> None:
    flags, tasks = task_set(tmp_path / "tasks", needles=4)
    server.respond_with(responder(tasks))
    # Output priced at 0, so that a run's reserved reply headroom costs nothing and the cap is
    # spent by what the runs read: three at once can start, about half of the 12 in all.
    prices = [f"--price=openai/{model}=1,0" for model in MODELS]
    cap = 0.005
    home = tmp_path / "home"
    args = ["eval", *flags, "--setting", GOOD_SETTING, "--setting", BAD_SETTING, "--api-base",
            server.base_url, *prices, "--max-cost", str(cap), "--concurrency", "3", "--json",
            "--ray", ray_cluster.address]  # fmt: skip
    done = run_cli(*args, home=home, timeout=400)
    assert done.returncode == 1, done.stderr
    assert "the total budget is spent" in done.stderr
    ((spent,),) = query(
        home,
        "SELECT SUM(r.cost_usd) FROM llm_requests r"
        " JOIN evaluation_sessions e ON e.session_id = r.session_id",
    )
    assert 0 < spent <= cap
    nodes = {p["node_id"] for p in trial_places(home) if p}
    assert nodes == {
        ray_cluster.head_id,
        ray_cluster.worker_id,
    }  # three at once: no node has 3 CPUs
    finished = query(home, "SELECT count(*) FROM evaluation_results")[0][0]
    assert 0 < finished < 2 * len(tasks)


def test_a_node_that_dies_mid_evaluation_costs_at_most_a_retry(
    dying_cluster: LocalCluster, tmp_path: Path
) -> None:
    flags, tasks = task_set(tmp_path / "tasks", needles=2)
    slow = ScriptedServer(models=MODELS, latency_s=DYING_SLOW_S).start()
    slow.respond_with(responder(tasks))
    home = tmp_path / "home"
    try:
        process = start_cli(*eval_args(slow, flags, "--max-cost", "5", "--concurrency", "2",
                                       "--json", "--ray", dying_cluster.address),
                            home=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        said = said_until(process, "[2/")
        # The first two trials end together (their workers start at once); the next two go out
        # at once to the warm workers: the node dies once both are mid-request (1.5 s each),
        # however late a busy machine lets this test see them.
        deadline = time.monotonic() + 30
        while slow.in_flight < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        dying_cluster.stop_worker()
        replacement = dying_cluster.add_worker()
        out, rest = process.communicate(timeout=400)
    finally:
        slow.stop()
    stderr = said + rest
    assert process.returncode == 0, stderr
    rows = query(home, "SELECT status, attempts, error, node FROM evaluation_results")
    assert len(rows) == 2 * len(tasks)
    assert all(status == "completed" for status, *_ in rows), rows
    retried = [row for row in rows if row[1] == 2]
    assert len(retried) == 2, stderr
    assert all(error.startswith("retried: node ray") and "died mid-trial" in error
               for _status, _attempts, error, _node in retried)  # fmt: skip
    places = trial_places(home)
    second = [p for p in places if p and p["attempt"] == 2]
    assert len(second) == len(retried)
    assert {p["node_id"] for p in second} == {replacement}
    assert len(places) == len(rows) + len(retried)
    # A lost attempt is a tagged session, `interrupted` with what it had sent home, or without a
    # row when the node died before its first events came back.
    tagged = query(home, "SELECT s.status, s.ran_on FROM evaluation_sessions e"
                   " LEFT JOIN sessions s ON e.session_id = s.id")  # fmt: skip
    unfinished = [(status, ran_on) for status, ran_on in tagged if status != "completed"]
    assert len(unfinished) == len(retried), (tagged, rows)
    assert all(status in ("interrupted", None) for status, _ in unfinished)
    assert all(json.loads(ran_on)["node_id"] == dying_cluster.worker_id
               for _status, ran_on in unfinished if ran_on)  # fmt: skip
    summary = by_setting(json.loads(out))
    assert summary["good"]["score_mean"] == 1.0


def test_a_cluster_nobody_runs_is_one_line(isolated_home: Path, tmp_path: Path) -> None:
    done = run_cli("eval", "--task", "needle", "--setting", "model=openai/good-model",
                   "--api-base", "http://127.0.0.1:9/v1", "--ray", "127.0.0.1:1",
                   home=isolated_home, timeout=60)  # fmt: skip
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "nothing answers at 127.0.0.1:1" in line
    assert "ray start --head" in line
    assert not (isolated_home / "sessions.db").exists() or not query(
        isolated_home, "SELECT * FROM sessions"
    )


def test_without_ray_installed_the_command_says_how_to_add_it(
    isolated_home: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "no-ray"  # a machine without the extra: `import ray` fails
    (missing / "ray").mkdir(parents=True)
    (missing / "ray" / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    done = run_cli("eval", "--task", "needle", "--setting", "model=openai/good-model",
                   "--api-base", "http://127.0.0.1:9/v1", "--ray", "auto", home=isolated_home,
                   env={"PYTHONPATH": f"{missing}:{Path.cwd()}"}, timeout=60)  # fmt: skip
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "pip install 'rlm-desktop[cluster]'" in line


def test_an_evaluation_stopped_mid_way_resumes_on_the_cluster_running_each_trial_once(
    ray_cluster: LocalCluster, server: ScriptedServer, tmp_path: Path
) -> None:
    flags, tasks = task_set(tmp_path / "tasks", needles=2)
    server.respond_with(responder(tasks))
    home = tmp_path / "home"
    more = ("--max-cost", "5", "--concurrency", "3", "--ray", ray_cluster.address)
    process = start_cli(*eval_args(server, flags, *more), home=home,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    said_until(process, "[1/")
    process.send_signal(signal.SIGINT)
    _out, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    (evaluation_id,) = {
        row[0] for row in query(home, "SELECT evaluation_id FROM evaluation_results")
    }
    before = query(home, "SELECT setting, task_id FROM evaluation_results")
    assert 0 < len(before) < 2 * len(tasks)
    stopped = query(home, "SELECT s.status FROM evaluation_sessions e JOIN sessions s"
                    " ON s.id = e.session_id WHERE s.status != 'completed'")  # fmt: skip
    assert all(status in ("cancelled", "interrupted") for (status,) in stopped)
    done = run_cli("eval", "--resume", evaluation_id, "--ray", ray_cluster.address, "--json",
                   home=home, timeout=400)  # fmt: skip
    assert done.returncode == 0, done.stderr
    after = query(home, "SELECT setting, task_id FROM evaluation_results")
    assert sorted(after) == sorted(set(after))
    assert len(after) == 2 * len(tasks)
    assert set(before) <= set(after)
    assert by_setting(json.loads(done.stdout))["good"]["score_mean"] == 1.0


def test_an_address_that_answers_but_is_no_ray_head_is_given_up_in_one_line(
    server: ScriptedServer, isolated_home: Path
) -> None:
    port = server.base_url.split(":")[-1].split("/")[0]  # an HTTP server: it answers, as no head
    done = run_cli("eval", "--task", "needle", "--setting", "model=openai/good-model",
                   "--api-base", server.base_url, "--ray", f"127.0.0.1:{port}",
                   home=isolated_home, timeout=120)  # fmt: skip
    assert done.returncode == 2
    said = [line for line in done.stderr.splitlines() if line.startswith("rlm-desktop eval:")]
    assert said == [
        f"rlm-desktop eval: --ray cannot join the Ray cluster at 127.0.0.1:{port}: no Ray head "
        "answered in 30 s (is it the address `ray start --head` printed?)"
    ]
