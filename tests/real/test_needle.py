"""A small needle evaluation on the real model: direct against rlm, the default profile against the
small one, replies held to prose and one block (`constrained_replies`) against free ones. Its
scores, and the share of RLM turns whose reply had exactly one block and whose code ran, are
recorded and printed for a person to read; the test asserts only that every trial ended in a known
status and was saved."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from tests.real.conftest import RUN_STATUSES, RUN_TIMEOUT_S, rlm_desktop, shown_session
from tests.real.report import REPORT_DIR, Report
from tests.real.server import LocalServer

pytestmark = pytest.mark.real

LENGTHS = (500, 2_000)
"""Input tokens of the haystacks: the model reads about 140 tokens a second."""
SETTINGS = {
    "direct-default": "mode=direct,profile=default",
    "direct-small": "mode=direct,profile=small",
    "rlm-default": "mode=rlm,profile=default,depth=1,max_turns=2",
    "rlm-small": "mode=rlm,profile=small,depth=1,max_turns=2",
    "rlm-default-held": "mode=rlm,profile=default-held,depth=1,max_turns=2",
    "rlm-small-held": "mode=rlm,profile=small-held,depth=1,max_turns=2",
}
RESULTS = REPORT_DIR / "needle"


def test_every_trial_of_a_needle_evaluation_ends_known_and_is_saved(
    local_server: LocalServer, real_home: Path, report: Report
) -> None:
    shutil.rmtree(RESULTS, ignore_errors=True)
    args = [
        "eval", "--task", "needle", "--count", "1", "--api-base", local_server.base_url,
        "--concurrency", "1", "--timeout", str(RUN_TIMEOUT_S), "--out", str(RESULTS),
    ]  # fmt: skip
    for length in LENGTHS:
        args += ["--length", str(length)]
    for name, values in SETTINGS.items():
        args += ["--setting", f"{name}:model={local_server.model},{values}"]
    done = rlm_desktop(real_home, *args, timeout=len(SETTINGS) * len(LENGTHS) * RUN_TIMEOUT_S)
    report.write(f"\n## Needle evaluation ({RESULTS})\n{done.stdout}")
    assert done.returncode == 0, done.stderr
    with (RESULTS / "runs.csv").open(encoding="utf-8") as file:
        trials = list(csv.DictReader(file))
    assert len(trials) == len(SETTINGS) * len(LENGTHS)
    sessions: dict[str, list[str]] = {}
    for trial in trials:
        title = f"needle: {trial['setting']} on {trial['task_id']}, score {trial['score']}"
        report.session(title, trial["session_id"])
        assert trial["status"] in RUN_STATUSES
        assert shown_session(real_home, trial["session_id"])["session"]["status"] == trial["status"]
        sessions.setdefault(trial["setting"], []).append(trial["session_id"])
    assert (RESULTS / "summary.json").is_file()
    report.turn_shapes({name: ids for name, ids in sessions.items() if name.startswith("rlm")})
