"""A needle trial of the real model sent to a local two-node Ray cluster: the user's own prompt
profiles (short replies) travel to the node, the node's engine streams Gemma's replies, and the
session saved here tells the same truthful ending as the evaluation, with the node it ran on."""

from __future__ import annotations

import csv
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.conftest import LocalCluster, start_cluster, stop_cluster
from tests.real.conftest import (
    ROOT_OUTPUT_TOKENS,
    RUN_STATUSES,
    RUN_TIMEOUT_S,
    assert_streamed,
    rlm_desktop,
    shown_session,
)
from tests.real.report import REPORT_DIR, Report
from tests.real.server import LocalServer

pytestmark = pytest.mark.real
RESULTS = REPORT_DIR / "cluster"


@pytest.fixture
def ray_cluster() -> Iterator[LocalCluster]:
    local = start_cluster()
    yield local
    stop_cluster(local)


def test_a_real_trial_on_a_cluster_node_is_saved_here_with_its_node(
    local_server: LocalServer, real_home: Path, report: Report, ray_cluster: LocalCluster
) -> None:
    done = rlm_desktop(
        real_home, "eval", "--task", "needle", "--count", "1", "--length", "500",
        "--setting", f"rlm:model={local_server.model},mode=rlm,depth=1,max_turns=3",
        "--api-base", local_server.base_url, "--timeout", str(RUN_TIMEOUT_S),
        "--ray", ray_cluster.address, "--out", str(RESULTS), "--json",
        timeout=RUN_TIMEOUT_S + 120,
    )  # fmt: skip
    report.write(f"\n## Needle trial on a Ray node ({RESULTS})\n{done.stderr}")
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["executor"] == "ray"
    with (RESULTS / "runs.csv").open(encoding="utf-8") as file:
        (trial,) = list(csv.DictReader(file))
    assert trial["status"] in RUN_STATUSES
    assert trial["executor"] == "ray"
    report.session(f"cluster: {trial['setting']} on {trial['task_id']}", trial["session_id"])
    session = shown_session(real_home, trial["session_id"])["session"]
    assert session["status"] == trial["status"]
    assert session["ran_on"]["node_id"] in {ray_cluster.head_id, ray_cluster.worker_id}
    assert_streamed(trial["session_id"])
    with sqlite3.connect(real_home / "sessions.db") as db:
        ((sandbox,),) = db.execute(
            "SELECT sandbox FROM sessions WHERE id = ?", [trial["session_id"]]
        )
        assert sandbox
        assert sandbox != "unused"
        outputs = [n for (n,) in db.execute(
            "SELECT output_tokens FROM llm_requests WHERE session_id = ?", [trial["session_id"]]
        )]  # fmt: skip
    # Each reply was held to the user's profile (256 tokens), not the bundled one's 8,192: the
    # profiles saved on this machine were the node's.
    assert outputs
    assert max(outputs) <= ROOT_OUTPUT_TOKENS
