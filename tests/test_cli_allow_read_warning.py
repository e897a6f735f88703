"""`run --allow-read` warns, in one line each, when the folder it opens to model code exposes
secrets: the filesystem root, the home folder, `~/.ssh` (also through a link), the app's data
folder. It is a warning: the run goes on, and `--json` still prints one JSON object."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli import run_cli
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

WARNING = "rlm-desktop run: warning: --allow-read "
FIX = "open a folder that holds only what the code needs instead"


def _run(
    server: ScriptedServer, tmp_path: Path, home: Path, user_home: Path, *opened: Path | str
) -> subprocess.CompletedProcess[str]:
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    server.respond_with(scripted(root=[repl("FINAL('7 zebrafish')")]))
    args = ["--query", "How many zebrafish?", "--doc", str(document), "--model", TEST_MODEL]
    args += ["--api-base", server.base_url, "--mode", "rlm", "--json"]
    for folder in opened:
        args += ["--allow-read", str(folder)]
    return run_cli("run", *args, home=home, env={"HOME": str(user_home)})


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(WARNING)]


def _completed_with_one_json_object(ran: subprocess.CompletedProcess[str]) -> None:
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count("\n") == 1
    result = json.loads(ran.stdout)
    assert (result["status"], result["answer"]) == ("completed", "7 zebrafish")


def test_opening_secrets_warns_in_one_line_each_and_the_run_goes_on(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    user_home = tmp_path / "user"
    keys = user_home / ".ssh"
    keys.mkdir(parents=True)
    (keys / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    project = tmp_path / "project"
    project.mkdir()
    innocent = tmp_path / "notes-folder"
    innocent.symlink_to(keys)
    scratch = isolated_home / "scratch"
    scratch.mkdir(parents=True)

    ran = _run(
        scripted_server, tmp_path, isolated_home, user_home,
        project, keys, user_home, innocent, scratch,
    )  # fmt: skip

    _completed_with_one_json_object(ran)
    assert "Traceback" not in ran.stderr
    assert _warnings(ran.stderr) == [
        f"{WARNING}{keys} is your SSH keys (~/.ssh): model code may read all of it "
        f"(read-only); {FIX}",
        f"{WARNING}{user_home} is your home folder ({user_home}), with your SSH keys (~/.ssh): "
        f"model code may read all of it (read-only); {FIX}",
        f"{WARNING}{innocent} (a link to {keys}) is your SSH keys (~/.ssh): model code may read "
        f"all of it (read-only); {FIX}",
        f"{WARNING}{scratch} is inside the app's data folder ({isolated_home}: saved sessions): "
        f"model code may read all of it (read-only); {FIX}",
    ]


def test_opening_the_filesystem_root_warns(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    user_home = tmp_path / "user"
    (user_home / ".gnupg").mkdir(parents=True)

    ran = _run(scripted_server, tmp_path, isolated_home, user_home, "/")

    _completed_with_one_json_object(ran)
    (line,) = _warnings(ran.stderr)
    assert line.startswith(f"{WARNING}/ is the whole filesystem, with your home folder ")
    assert f"your home folder ({user_home})" in line
    assert line.endswith(f"model code may read all of it (read-only); {FIX}")


def test_a_project_folder_opens_without_a_word(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    user_home = tmp_path / "user"
    (user_home / ".ssh").mkdir(parents=True)
    project = user_home / "project"  # inside the home folder, beside ~/.ssh: nothing secret
    project.mkdir()

    ran = _run(scripted_server, tmp_path, isolated_home, user_home, project)

    _completed_with_one_json_object(ran)
    assert "warning" not in ran.stderr
