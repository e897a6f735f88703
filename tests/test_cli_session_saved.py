"""`rlm-desktop run` never says all is well while its session was lost, and a database that
cannot be used is one clear line from every command.

Each test reproduces a fault seen with the real CLI: model code printing a lone surrogate, a
document whose file name is Latin-1 bytes, and a full disk each dropped the session's events
while `run` printed `completed` and exited 0; a read-only or damaged database made `run` print a
traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlm_desktop.commands.run import EXIT_NOT_SAVED
from rlm_desktop.paths import database_path
from rlm_desktop.store import Store
from rlm_desktop.store.room import MIN_FREE_BYTES
from tests.cli import CLI, ROOT, isolated_env, run_cli, unprivileged
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

DISK_BYTES = 16 * 1024 * 1024
FREE_BYTES = MIN_FREE_BYTES + 2 * 1024 * 1024
"""The small disk keeps the room a run needs to start being recorded (less, and it would not
start: tests/test_cli_full_disk.py), not for three cells printing a megabyte each."""
FILL_AND_RUN = """
home=$1; out=$2; shift 2
mount -t tmpfs -o size=$DISK_BYTES tmpfs "$home" || exit 97
avail=$(df -B1 --output=avail "$home" | tail -n 1)
head -c $((avail - FREE_BYTES)) /dev/zero > "$home/filler"
"$@"; code=$?
cp "$home"/sessions.db* "$out"/
exit $code
"""


def _run(server: ScriptedServer, document: Path, *extra: str) -> list[str]:
    return [
        "run", "--query", "What is here?", "--doc", str(document), "--model", TEST_MODEL,
        "--api-base", server.base_url, "--mode", "rlm", "--json", *extra,
    ]  # fmt: skip


def _one_clear_line(result: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert result.returncode == code, result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr


def test_a_lone_surrogate_printed_by_model_code_is_saved(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    scripted_server.respond_with(
        scripted(root=[repl("print('\\udcff')"), repl("FINAL('\\udcff')")])
    )
    ran = run_cli(*_run(scripted_server, document), home=isolated_home)

    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert (result["status"], result["answer"], result["warnings"]) == ("completed", "\udcff", [])
    shown = run_cli("sessions", "show", result["session_id"], "--json", home=isolated_home)
    detail = json.loads(shown.stdout)
    assert detail["session"]["status"] == "completed"
    assert [turn["stdout"] for turn in detail["turns"]] == ["\\udcff\n", ""]


def test_a_latin1_file_name_is_saved_and_shown_decoded(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.txt"), "wb") as file:
        file.write(b"Zebrafish: 7 in tank A.\n")
    scripted_server.respond_with(scripted(root=[repl("print(context_meta)"), repl("FINAL(7)")]))
    ran = run_cli(*_run(scripted_server, folder), home=isolated_home)

    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert (result["status"], result["warnings"]) == ("completed", [])
    shown = run_cli("sessions", "show", result["session_id"], home=isolated_home)
    assert shown.returncode == 0, shown.stderr
    assert "caf\ufffd.txt" in shown.stdout
    assert "Answer:\n7" in shown.stdout


def _private_tmpfs_refusal(probe: Path) -> str:
    """Why this kernel refuses a tmpfs in a private mount namespace ("" when it allows one)."""
    if shutil.which("unshare") is None:
        return "no unshare(1) on this machine"
    tried = subprocess.run(
        ["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o size=1m tmpfs "$0"', str(probe)],
        capture_output=True,
        text=True,
        check=False,
    )
    return tried.stderr.strip() or f"exit {tried.returncode}" if tried.returncode else ""


def test_a_full_disk_is_reported_and_the_run_does_not_exit_0(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    """The data folder is a 16 MiB tmpfs with 6 MiB left, room for the run to start; model code
    then prints 900,000 characters in each of three turns."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    refused = _private_tmpfs_refusal(isolated_home)
    if refused:
        pytest.skip(f"the kernel refuses a tmpfs in a private mount namespace: {refused}")
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    printing = [repl("print('x' * 900_000)")] * 3
    scripted_server.respond_with(scripted(root=[*printing, repl("FINAL('7 zebrafish')")]))
    saved = tmp_path / "saved"
    saved.mkdir()
    env = {"DISK_BYTES": str(DISK_BYTES), "FREE_BYTES": str(FREE_BYTES)}
    ran = subprocess.run(
        ["unshare", "-rm", "sh", "-c", FILL_AND_RUN, "sh", str(isolated_home), str(saved),
         sys.executable, "-m", CLI, *_run(scripted_server, document)],
        cwd=ROOT, env=isolated_env(isolated_home, env), capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip

    assert ran.returncode == EXIT_NOT_SAVED, ran.stderr
    result = json.loads(ran.stdout)
    assert (result["status"], result["answer"]) == ("completed", "7 zebrafish")
    (warning,) = result["warnings"]
    assert "the disk is full" in warning
    assert f"rlm-desktop run: {warning}\n" in ran.stderr
    assert "Traceback" not in ran.stderr
    # What reached the disk tells the truth: the session is not there as completed. (How far it got
    # depends on what else filled the disk first: its opening, or nothing at all.)
    store = Store(saved / "sessions.db")
    sessions = store.list_sessions()
    store.close()
    assert [(s["id"], s["status"]) for s in sessions] in (
        [(result["session_id"], "interrupted")],
        [],
    )


def test_a_damaged_database_is_one_line_from_every_command(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    database_path().parent.mkdir(parents=True, exist_ok=True)
    database_path().write_bytes(b"this is not a database\n" * 2000)
    scripted_server.respond_with(scripted(root=[repl("FINAL(7)")]))

    ran = run_cli(*_run(scripted_server, document), home=isolated_home)
    _one_clear_line(ran, EXIT_NOT_SAVED, str(database_path()), "not a readable session database")
    assert scripted_server.chat_requests() == []
    for argv in (
        ("list",),
        ("list", "--json"),
        ("show", "x", "--json"),
        ("export", "x", "--format", "md"),
        ("search", "zebrafish"),
        ("delete", "x"),
    ):
        shown = run_cli("sessions", *argv, home=isolated_home)
        _one_clear_line(shown, 1, "not a readable session database", "move it aside")


def test_a_read_only_data_folder_is_one_line_from_every_command(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    assert run_cli("sessions", "list", home=isolated_home).returncode == 0  # the database exists
    scripted_server.respond_with(scripted(root=[repl("FINAL(7)")]))
    (isolated_home / "scratch").mkdir(exist_ok=True)
    database_path().chmod(0o444)
    isolated_home.chmod(0o555)
    try:
        ran = run_cli(*_run(scripted_server, document), home=isolated_home, **unprivileged())
        listed = run_cli("sessions", "list", home=isolated_home, **unprivileged())
        shown = run_cli("sessions", "show", "x", "--json", home=isolated_home, **unprivileged())
    finally:
        isolated_home.chmod(0o755)
        database_path().chmod(0o644)

    _one_clear_line(ran, EXIT_NOT_SAVED, "cannot be written", "RLM_DESKTOP_HOME")
    assert scripted_server.chat_requests() == []
    for result in (listed, shown):
        _one_clear_line(result, 1, "cannot be written", "RLM_DESKTOP_HOME")


def test_a_read_only_database_file_stops_the_run_before_it_starts(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    assert run_cli("sessions", "list", home=isolated_home).returncode == 0
    scripted_server.respond_with(scripted(root=[repl("FINAL(7)")]))
    database_path().chmod(0o444)
    try:
        ran = run_cli(*_run(scripted_server, document), home=isolated_home, **unprivileged())
        listed = run_cli("sessions", "list", "--json", home=isolated_home, **unprivileged())
    finally:
        database_path().chmod(0o644)

    _one_clear_line(ran, EXIT_NOT_SAVED, "cannot be written")
    assert scripted_server.chat_requests() == []
    assert listed.returncode == 0, listed.stderr  # reading needs no write
    assert json.loads(listed.stdout) == {"sessions": []}


def test_sessions_show_json_gives_each_turn_the_model_s_reply(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("Zebrafish: 7 in tank A.\n")
    replies = [repl("print(len(context))", "Let me measure."), repl("FINAL('7')", "Done.")]
    scripted_server.respond_with(scripted(root=replies))
    ran = run_cli(*_run(scripted_server, document), home=isolated_home)

    assert ran.returncode == 0, ran.stderr
    session_id = json.loads(ran.stdout)["session_id"]
    shown = run_cli("sessions", "show", session_id, "--json", home=isolated_home)
    assert [turn["reply"] for turn in json.loads(shown.stdout)["turns"]] == replies
