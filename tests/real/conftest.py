"""The real-model suite's fixtures: one llama.cpp server for the session, the report of what the
model wrote, and each test's data folder with short replies in its profiles."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import profiles
from rlm_desktop.engine.events import RunStatus
from rlm_desktop.engine.run import STATUS_BY_OUTCOME
from tests.cli import run_cli
from tests.real.report import REPORT_DIR, Report, saved_run
from tests.real.server import LocalServer, start_server

ROOT_OUTPUT_TOKENS = 256
"""Each root reply's output limit: the model writes about 18 tokens a second on 2 cores and
seldom stops by itself, so a bundled profile's 8,192 would be a turn of seven minutes."""
SUB_OUTPUT_TOKENS = 96
RUN_TIMEOUT_S = 420
RUN_STATUSES = frozenset(get_args(RunStatus))
SERVER_LOG = REPORT_DIR / "server.log"


@pytest.fixture(scope="session")
def report() -> Iterator[Report]:
    """The suite's report; the speeds measured are added at its end."""
    kept = Report(REPORT_DIR)
    yield kept
    if SERVER_LOG.exists():
        kept.speeds(SERVER_LOG)
    kept.write(f"\nreport: {kept.path}\nserver log: {SERVER_LOG}")


@pytest.fixture(scope="session")
def local_server(report: Report) -> Iterator[LocalServer]:
    """llama.cpp's server with Gemma 3 270M on a free port of 127.0.0.1, for the whole session."""
    server = start_server(SERVER_LOG)
    report.write(f"server {server.base_url}, model {server.model_id}")
    yield server
    server.stop()


@pytest.fixture
def real_home(isolated_home: Path) -> Path:
    """The test's data folder, its profiles the bundled ones with short replies."""
    cap_replies(ROOT_OUTPUT_TOKENS)
    return isolated_home


HELD = "-held"
"""The suffix of each profile's copy whose replies the server holds to prose and one block."""


def cap_replies(root_tokens: int) -> None:
    """Write the bundled profiles (prompts, patterns, settings) as the user's own, with root
    replies of at most `root_tokens` and sub-call replies of `SUB_OUTPUT_TOKENS`, as a user would
    set them in Settings → Profiles; and beside each, a copy named `<profile>-held` whose replies
    are constrained (`constrained_replies`) and matched by no model name."""
    bundled = paths.resource("profiles")
    user = paths.user_profiles_dir()
    user.mkdir(parents=True, exist_ok=True)
    table: dict[str, dict[str, Any]] = {}
    for name, entry in profiles.read_index(bundled).items():
        shutil.copy(bundled / entry["prompt"], user / entry["prompt"])
        capped = {
            **entry,
            "root_max_output_tokens": root_tokens,
            "sub_max_output_tokens": SUB_OUTPUT_TOKENS,
        }
        table[name] = capped
        table[name + HELD] = {
            **capped, "patterns": [], "local_servers": False, "constrained_replies": True
        }
    profiles.write_index(user, table)


def rlm_desktop(
    home: Path, *args: str, timeout: float = RUN_TIMEOUT_S + 60
) -> subprocess.CompletedProcess[str]:
    """The real `rlm-desktop` run to its end in `home`."""
    return run_cli(*args, home=home, timeout=timeout)


def run_json(
    home: Path, server: LocalServer, *args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """`rlm-desktop run --json` against the server, and the object it printed."""
    done = rlm_desktop(
        home, "run", "--model", server.model, "--api-base", server.base_url,
        "--timeout", str(RUN_TIMEOUT_S), "--json", *args,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip(), done.stderr
    return done, json.loads(done.stdout)


def shown_session(home: Path, session_id: str) -> dict[str, Any]:
    """`sessions show --json` of a saved run."""
    done = rlm_desktop(home, "sessions", "show", session_id, "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def assert_truthful_ending(home: Path, result: dict[str, Any], exit_code: int) -> dict[str, Any]:
    """The run ended in a status of the known set, its exit code says so, and the saved session
    tells the same ending, counts and model; returns the saved session."""
    assert result["status"] in RUN_STATUSES
    assert exit_code == (0 if result["status"] == "completed" else 1)
    saved = shown_session(home, result["session_id"])
    session = saved["session"]
    for key in ("status", "answer", "turns", "input_tokens", "output_tokens", "sub_calls"):
        assert session[key] == result[key], key
    (root,) = [call for call in saved["calls"] if call["parent_id"] is None]
    assert STATUS_BY_OUTCOME[root["status"]] == result["status"]
    if result["status"] != "completed":
        assert result["error"], "a run that did not complete says why"
    return saved


def assert_streamed(session_id: str) -> None:
    """Every reply of the saved run arrived as a stream: its record of arrivals grows in time and
    characters up to the reply kept, the first text before the reply's end."""
    detail, responses = saved_run(session_id)
    replies = [r for r in detail.requests if r["content"]]
    assert replies
    for request in replies:
        arrivals = responses[request["id"]].arrivals
        assert arrivals, request["id"]
        times = [when for when, _characters in arrivals]
        characters = [count for _when, count in arrivals]
        assert times == sorted(times)
        assert characters == sorted(characters)
        assert characters[-1] >= len(request["content"])
        assert times[0] <= request["latency_s"]
    assert any(len(responses[r["id"]].arrivals) > 1 for r in replies), "replies came in pieces"
