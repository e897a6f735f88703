"""`rlm-desktop eval` as a real subprocess against the scripted server: two settings, one
scripted to answer right and one wrong, every run a stored session, the scores the script
implies, a total budget that holds, and a resume after the process is killed mid-way."""

from __future__ import annotations

import json
import signal
import sqlite3
import statistics
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.evaluation.scoring import numeric
from rlm_desktop.evaluation.task_sets import TaskSpec, generate
from rlm_desktop.evaluation.tasks import Task
from tests.cli import run_cli, start_cli
from tests.evaluation.scripting import MODELS, NUMERIC_ERROR, PRICES, numeric_tasks_file, responder
from tests.scripted_server import ScriptedServer

GOOD_SETTING = "good:model=openai/good-model,mode=rlm,depth=1"
BAD_SETTING = "bad:model=openai/bad-model,mode=direct"


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    return numeric_tasks_file(tmp_path / "my-tasks")


def task_set(tasks_file: Path, needles: int) -> tuple[list[str], list[Task]]:
    """The flags and the tasks of a set of `needles` needle tasks plus the user's numeric ones."""
    spec = TaskSpec(kinds=("needle", str(tasks_file)), lengths=(300,), seed=3, count=needles)
    flags = ["--task", "needle", "--task", str(tasks_file), "--length", "300", "--seed", "3",
             "--count", str(needles)]  # fmt: skip
    return flags, generate(spec)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    server = ScriptedServer(models=MODELS).start()
    yield server
    server.stop()


def query(home: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(home / "sessions.db") as db:
        return list(db.execute(sql, params).fetchall())


def eval_args(server: ScriptedServer, flags: list[str], *more: str) -> list[str]:
    return ["eval", *flags, "--setting", GOOD_SETTING, "--setting", BAD_SETTING,
            "--api-base", server.base_url, *PRICES, *more]  # fmt: skip


def test_two_settings_report_the_scores_the_script_implies(
    server: ScriptedServer, tasks_file: Path, isolated_home: Path, tmp_path: Path
) -> None:
    flags, tasks = task_set(tasks_file, needles=2)
    server.respond_with(responder(tasks))
    out = tmp_path / "results"
    done = run_cli(*eval_args(server, flags, "--max-cost", "5", "--out", str(out), "--json"),
                   home=isolated_home, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    rows = {row["name"]: row for row in summary["settings"]}
    bad_scores = [numeric(str(int(t.answer) + NUMERIC_ERROR), t.answer) if t.scoring == "numeric"
                  else 0.0 for t in tasks]  # fmt: skip
    assert 0.75**NUMERIC_ERROR in bad_scores
    assert 0.0 in bad_scores
    assert rows["good"]["score_mean"] == 1.0
    assert rows["good"]["score_ci95"] == [1.0, 1.0]
    assert rows["bad"]["score_mean"] == pytest.approx(statistics.fmean(bad_scores))
    assert rows["bad"]["score_ci95"][0] <= rows["bad"]["score_mean"] <= rows["bad"]["score_ci95"][1]
    for row in rows.values():
        assert (row["runs"], row["failures"]) == (len(tasks), 0)
        assert 0 < row["cost_median"] <= row["cost_p95"]

    evaluation_id = summary["evaluation_id"]
    tagged = query(isolated_home,
        "SELECT e.setting, e.task_id, s.status, s.model, s.chosen_mode FROM evaluation_sessions e "
        "JOIN sessions s ON s.id = e.session_id WHERE e.evaluation_id = ?", evaluation_id)  # fmt: skip
    assert len(tagged) == 2 * len(tasks)
    assert {(setting, task) for setting, task, *_ in tagged} == {
        (s, t.id) for s in ("good", "bad") for t in tasks
    }
    assert {row[2:] for row in tagged} == {
        ("completed", "openai/good-model", "rlm"), ("completed", "openai/bad-model", "direct")
    }  # fmt: skip
    session_id = query(isolated_home, "SELECT session_id FROM evaluation_sessions LIMIT 1")[0][0]
    shown = run_cli("sessions", "show", session_id, "--json", home=isolated_home)
    assert shown.returncode == 0
    assert json.loads(shown.stdout)["session"]["status"] == "completed"

    saved = json.loads((out / "summary.json").read_text())
    assert saved["settings"] == summary["settings"]
    runs_csv = (out / "runs.csv").read_text().splitlines()
    assert len(runs_csv) == 1 + 2 * len(tasks)
    assert (out / "summary.csv").read_text().splitlines()[0].startswith("name,runs,score_mean")


def test_the_total_budget_holds_and_what_it_cannot_cover_is_not_started(
    server: ScriptedServer, tasks_file: Path, isolated_home: Path
) -> None:
    flags, tasks = task_set(tasks_file, needles=2)
    server.respond_with(responder(tasks))
    # Output priced at 0, so that a run's reserved reply headroom costs nothing and the cap is
    # spent by what the runs read: enough for a few of them, not all.
    prices = [f"--price=openai/{model}=1,0" for model in MODELS]
    cap = 0.002
    args = ["eval", *flags, "--setting", GOOD_SETTING, "--setting", BAD_SETTING, "--api-base",
            server.base_url, *prices, "--max-cost", str(cap), "--concurrency", "1", "--json"]  # fmt: skip
    done = run_cli(*args, home=isolated_home, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "not started: the total budget is spent" in done.stderr
    assert "--resume" in done.stderr
    assert "--max-cost" in done.stderr
    spent = query(isolated_home, "SELECT SUM(cost_usd) FROM llm_requests")[0][0]
    assert 0 < spent <= cap
    settings = json.loads(done.stdout)["settings"]
    assert 0 < sum(row["runs"] for row in settings) < 2 * len(tasks)
    assert sum(row["failures"] for row in settings) == 0  # no run started that the cap then cut


def test_a_local_servers_unpriced_models_count_at_zero_under_a_dollar_cap(
    server: ScriptedServer, tasks_file: Path, isolated_home: Path
) -> None:
    flags, tasks = task_set(tasks_file, needles=1)
    server.respond_with(responder(tasks))
    args = ["eval", *flags, "--setting", GOOD_SETTING, "--api-base", server.base_url,
            "--max-cost", "0.50", "--concurrency", "1", "--json"]  # fmt: skip
    done = run_cli(*args, home=isolated_home, timeout=300)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["settings"]
    assert row["runs"] == len(tasks)
    assert query(isolated_home, "SELECT SUM(cost_usd) FROM llm_requests")[0][0] == 0


def finished_rows(home: Path) -> dict[tuple[str, str], str]:
    try:
        rows = query(home, "SELECT setting, task_id, session_id FROM evaluation_results")
    except sqlite3.OperationalError:  # the tables are not made yet
        return {}
    return {(setting, task): session for setting, task, session in rows}


def test_a_killed_evaluation_resumes_where_it_stopped(
    tasks_file: Path, isolated_home: Path
) -> None:
    server = ScriptedServer(
        models=MODELS, latency_s=0.3
    ).start()  # paces runs so the kill lands mid-way
    try:
        flags, tasks = task_set(tasks_file, needles=3)
        server.respond_with(responder(tasks))
        process = start_cli(*eval_args(server, flags, "--concurrency", "1"), home=isolated_home,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while len(finished_rows(isolated_home)) < 3 and process.poll() is None:
                assert time.monotonic() < deadline, "no run finished in two minutes"
                time.sleep(0.1)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(30)
        before = finished_rows(isolated_home)
        total = 2 * len(tasks)
        assert 3 <= len(before) < total
        (evaluation_id,) = [row[0] for row in query(isolated_home, "SELECT id FROM evaluations")]

        resumed = run_cli(
            "eval", "--resume", evaluation_id, "--json", home=isolated_home, timeout=300
        )
        assert resumed.returncode == 0, resumed.stderr
        assert f"{total - len(before)} to run" in resumed.stderr
    finally:
        server.stop()
    after = finished_rows(isolated_home)
    assert len(after) == total
    assert {key: after[key] for key in before} == before  # finished runs were not run again
    rows = {row["name"]: row for row in json.loads(resumed.stdout)["settings"]}
    assert rows["good"]["score_mean"] == 1.0
    assert rows["good"]["runs"] == len(tasks)
    assert rows["bad"]["runs"] == len(tasks)
    statuses = [s for (s,) in query(isolated_home,
        "SELECT s.status FROM evaluation_sessions e JOIN sessions s ON s.id = e.session_id")]  # fmt: skip
    assert statuses.count("completed") == total
    assert set(statuses) <= {"completed", "interrupted"}  # a run cut off by the kill says so


def test_bad_input_is_one_line_and_nothing_is_recorded(
    server: ScriptedServer, isolated_home: Path, tmp_path: Path
) -> None:
    cases = [
        (["--task", "haystack", "--setting", "model=openai/x"], "neither one of needle"),
        (["--task", "needle", "--setting", "model=openai/x,speed=fast"], "'speed=fast' is not understood"),
        (["--task", "needle"], "--setting is missing"),
        (["--task", "needle", "--setting", "model=openai/x", "--setting", "model=openai/x"], "given twice"),
        (["--task", str(tmp_path), "--setting", "model=openai/good-model"], "has no tasks.jsonl"),
        (["--resume", "nope"], "--resume 'nope' is not a stored evaluation"),
    ]  # fmt: skip
    cases.append((["--task", "needle", "--setting", "model=openai/absent-model"],
                  "--setting model 'openai/absent-model'"))  # fmt: skip
    bad_line = tmp_path / "bad.jsonl"
    bad_line.write_text('{"question": "q", "answer": "1", "context": "c"}\n{"question": "q"}\n')
    cases.append(
        (
            ["--task", str(bad_line), "--setting", "model=openai/good-model"],
            'line 2: needs an "answer"',
        )
    )
    for flags, message in cases:
        done = run_cli("eval", *flags, "--api-base", server.base_url, home=isolated_home)
        assert done.returncode == 2, (flags, done.stderr)
        assert message in done.stderr, (flags, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
        assert "Traceback" not in done.stderr
    # Without an endpoint the model is a provider's own, and a dollar cap needs its price.
    hosted = run_cli("eval", "--task", "needle", "--setting", "model=openai/good-model",
                     "--max-cost", "1", home=isolated_home)  # fmt: skip
    assert hosted.returncode == 2
    assert "--price has none for openai/good-model" in hosted.stderr
    assert query(isolated_home, "SELECT COUNT(*) FROM evaluations")[0][0] == 0
