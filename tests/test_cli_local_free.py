"""A model served at `--api-base` (the user's own server) that litellm does not price is counted at
$0 under a dollar cap, in `run` as in the window, and says so; a model of a provider's own API
without a price is still refused."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import run_cli
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer


def test_a_local_servers_model_is_counted_at_zero_under_a_dollar_cap(
    scripted_server: ScriptedServer, isolated_home: Path, tmp_path: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    scripted_server.respond_with(scripted(root=[repl("FINAL('7')")]))
    ran = run_cli(
        "run", "--query", "How many zebrafish?", "--doc", str(document), "--model", TEST_MODEL,
        "--api-base", scripted_server.base_url, "--mode", "rlm", "--max-cost", "0.50", "--json",
        home=isolated_home,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert (result["status"], result["answer"], result["cost_usd"]) == ("completed", "7", 0)
    assert f"{TEST_MODEL} counted at $0" in ran.stderr


def test_an_unpriced_model_of_a_providers_own_api_is_still_refused(
    isolated_home: Path, tmp_path: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    ran = run_cli(
        "run", "--query", "q", "--doc", str(document), "--model", "openai/no-such-priced-model",
        "--mode", "rlm", "--max-cost", "0.50", home=isolated_home,
    )  # fmt: skip
    assert ran.returncode == 2
    assert "give its price" in ran.stderr
