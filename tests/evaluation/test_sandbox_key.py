"""The `sandbox` setting key of `eval` (and of a batch's rows): checked where it is read, one line
naming the key when it is wrong, and reaching each trial's run, whose saved session says which
sandbox ran its model code."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from rlm_desktop.engine.config import ConfigError
from rlm_desktop.evaluation.settings import parse_setting
from rlm_desktop.evaluation.user_tasks import user_tasks
from tests.batch.stored import query
from tests.cli import run_cli
from tests.evaluation.scripting import GOOD, PRICES, numeric_tasks_file, responder
from tests.evaluation.test_eval_cli import server as server  # noqa: F401 (a fixture)
from tests.scripted_server import ScriptedServer


def test_the_key_is_read_checked_and_named() -> None:
    assert parse_setting("w:model=openai/m,sandbox=wasm").sandbox == "wasm"
    assert parse_setting("model=openai/m").sandbox == "auto"
    assert parse_setting("model=openai/m,sandbox=kernel").model_choices()["sandbox"] == "kernel"
    for bad in ("sandbox=docker", "sandbox=WASM"):
        with pytest.raises(ConfigError) as refused:
            parse_setting(f"model=openai/m,{bad}")
        assert str(refused.value) == (
            f"setting 'model=openai/m,{bad}': sandbox must be auto, kernel or wasm"
        )
    unnamed = [parse_setting(f"model=openai/m,sandbox={s}").name for s in ("auto", "wasm")]
    assert unnamed == ["m/rlm/d2", "m/rlm/d2/wasm"], "two sandboxes of one model are two names"


def test_a_trial_under_sandbox_wasm_runs_its_code_there(
    server: ScriptedServer,  # noqa: F811 (the fixture imported above)
    wasm_guest: Path,
    isolated_home: Path,
    tmp_path: Path,
) -> None:
    tasks_file = numeric_tasks_file(tmp_path / "tasks", count=1)
    server.respond_with(responder(user_tasks(tasks_file)))
    done = run_cli("eval", "--task", str(tasks_file),
                   "--setting", f"w:model=openai/{GOOD},mode=rlm,depth=1,sandbox=wasm",
                   "--setting", f"k:model=openai/{GOOD},mode=rlm,depth=1",
                   "--api-base", server.base_url, *PRICES, "--json",
                   home=isolated_home, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    scores = {row["name"]: row["score_mean"] for row in json.loads(done.stdout)["settings"]}
    assert scores == {"w": 1.0, "k": 1.0}
    levels = dict(
        query(
            isolated_home,
            "SELECT t.setting, s.sandbox FROM evaluation_sessions t JOIN sessions s "
            "ON s.id = t.session_id",
        )
    )
    assert levels["w"].startswith("wasm+wasmtime"), levels
    assert not levels["k"].startswith("wasm"), levels
    settings = dict(
        query(
            isolated_home,
            "SELECT t.setting, json_extract(s.settings, '$.sandbox') FROM evaluation_sessions t "
            "JOIN sessions s ON s.id = t.session_id",
        )
    )
    assert settings == {"w": "wasm", "k": "auto"}


def test_a_bad_sandbox_is_one_line_naming_the_key(
    server: ScriptedServer,  # noqa: F811 (the fixture imported above)
    isolated_home: Path,
) -> None:
    done = run_cli("eval", "--task", "needle", "--setting", "model=openai/x,sandbox=docker",
                   "--api-base", server.base_url, home=isolated_home)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "rlm-desktop eval: --setting 'model=openai/x,sandbox=docker': sandbox must be auto, "
        "kernel or wasm"
    )


def test_a_stored_setting_whose_sandbox_was_tampered_with_is_refused_on_resume(
    server: ScriptedServer,  # noqa: F811 (the fixture imported above)
    isolated_home: Path,
) -> None:
    """A shared sessions.db is untrusted: its stored setting naming a sandbox that does not
    exist is one line on `--resume`, and nothing runs."""
    started = run_cli("eval", "--task", "needle", "--count", "1", "--length", "300",
                      "--setting", f"s:model=openai/{GOOD},mode=direct", "--api-base",
                      server.base_url, *PRICES, "--max-cost", "0.000001",
                      home=isolated_home, timeout=300)  # fmt: skip
    assert started.returncode == 1, started.stderr  # its one run is left to resume
    [(evaluation_id, stored)] = query(isolated_home, "SELECT id, settings FROM evaluations")
    settings = json.loads(stored)
    settings[0]["sandbox"] = ["../../bin/sh"]
    with sqlite3.connect(isolated_home / "sessions.db") as db:
        db.execute("UPDATE evaluations SET settings = ?", [json.dumps(settings)])
    resumed = run_cli("eval", "--resume", evaluation_id, "--max-cost", "5",
                      home=isolated_home, timeout=300)  # fmt: skip
    assert resumed.returncode == 2, resumed.stderr
    assert resumed.stderr.strip() == (
        "rlm-desktop eval: --setting 's': sandbox ['../../bin/sh'] is unknown: use auto, kernel "
        "or wasm"
    )
    assert query(isolated_home, "SELECT COUNT(*) FROM sessions WHERE status = 'completed'") == [
        (0,)
    ]
