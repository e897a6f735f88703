"""A prompt profile the CLI cannot read is one line naming its file and the fix (exit 2), and
stops only the runs that would use it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli import run_cli
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

LATIN1_PROMPT = b"Caf\xe9 rules for $context_shape."
INDEX = (
    '[mine]\nprompt = "mine.txt"\npatterns = ["openai/test-*"]\n'
    '[house]\nprompt = "house.txt"\npatterns = ["openai/house-*"]\n'
)


def _profiles(home: Path) -> Path:
    """The user's profiles: `mine` (Latin-1 prompt, for test models) and `house` (fine)."""
    folder = home / "profiles"
    folder.mkdir(parents=True)
    (folder / "profiles.toml").write_text(INDEX, encoding="utf-8")
    (folder / "mine.txt").write_bytes(LATIN1_PROMPT)
    (folder / "house.txt").write_text("House rules for $context_shape.", encoding="utf-8")
    return folder / "mine.txt"


def _one_line(result: subprocess.CompletedProcess[str], command: str, prompt: Path) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr == (
        f"rlm-desktop {command}: profile 'mine': prompt file {prompt} is not UTF-8 text"
        " (byte 0xe9 at offset 3); save it as UTF-8\n"
    )


def test_run_and_eval_name_the_prompt_file_that_is_not_utf8(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    prompt = _profiles(isolated_home)
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    scripted_server.respond_with(scripted(root=[repl("FINAL(7)")]))
    served = ("--model", TEST_MODEL, "--api-base", scripted_server.base_url)

    ran = run_cli(
        "run", "--query", "How many?", "--doc", str(document), *served, "--mode", "rlm",
        "--json", home=isolated_home,
    )  # fmt: skip
    _one_line(ran, "run", prompt)
    assert ran.stdout == ""
    evaluated = run_cli(
        "eval", "--task", "needle", "--count", "1", "--length", "200",
        "--setting", f"a:model={TEST_MODEL}", "--api-base", scripted_server.base_url,
        "--out", str(tmp_path / "eval"), home=isolated_home,
    )  # fmt: skip
    _one_line(evaluated, "eval", prompt)
    assert scripted_server.chat_requests() == []
    assert prompt.read_bytes() == LATIN1_PROMPT


def test_a_run_with_another_profile_still_runs(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    _profiles(isolated_home)
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    scripted_server.respond_with(scripted(root=[repl("FINAL(7)")]))

    ran = run_cli(
        "run", "--query", "How many?", "--doc", str(document), "--model", TEST_MODEL,
        "--api-base", scripted_server.base_url, "--mode", "rlm", "--profile", "house", "--json",
        home=isolated_home,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["status"] == "completed"
    (request,) = scripted_server.chat_requests()
    assert request["messages"][0]["content"].startswith("House rules for ")
