"""A run on a disk without room to record it stops before its first request: one line naming the
folder and the fix, exit 3 (the session could not be saved), nothing sent to the provider, and
the sessions already saved there intact.

The data folder is a real small disk (a tmpfs of the test's own), holding one saved session,
then filled: to the last byte, to 100 KB left, and to 5 MiB left with an 8 MB document to record.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rlm_desktop.commands.run import EXIT_NOT_SAVED
from tests.cli import run_cli
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.small_disk import fill, small_disk

DISK_BYTES = 16 * 1024 * 1024
ANSWER = "7 zebrafish"


def _run(server: ScriptedServer, document: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(
        "run", "--query", "How many zebrafish?", "--doc", str(document), "--model", TEST_MODEL,
        "--api-base", server.base_url, "--mode", "rlm", "--json", home=home,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("left", "document_chars"),
    [(0, 100), (100_000, 100), (5 * 1024 * 1024, 8_000_000)],
    ids=["no-byte-left", "100-KB-left", "5-MiB-left-8-MB-document"],
)
def test_a_disk_without_room_stops_the_run_before_any_request(
    scripted_server: ScriptedServer,
    tmp_path: Path,
    isolated_home: Path,
    left: int,
    document_chars: int,
) -> None:
    small = tmp_path / "small.txt"
    small.write_text("Zebrafish: 7 in tank A.\n")
    document = tmp_path / "notes.txt"
    document.write_text(("Zebrafish: 7 in tank A.\n" * document_chars)[:document_chars])
    scripted_server.respond_with(scripted(root=[repl(f"FINAL({ANSWER!r})")]))
    with small_disk(isolated_home, DISK_BYTES):
        saved = _run(scripted_server, small, isolated_home)
        assert saved.returncode == 0, saved.stderr
        earlier = json.loads(saved.stdout)["session_id"]
        sent = len(scripted_server.chat_requests())
        filler = fill(isolated_home, leave=left)

        ran = _run(scripted_server, document, isolated_home)

        assert ran.returncode == EXIT_NOT_SAVED, ran.stderr
        assert ran.stdout == ""
        (line,) = ran.stderr.splitlines()
        assert line.startswith("rlm-desktop run: ")
        assert "the disk is full" in line
        assert str(isolated_home) in line
        assert "free some space" in line
        assert "RLM_DESKTOP_HOME" in line
        assert len(scripted_server.chat_requests()) == sent  # nothing reached the provider

        filler.unlink()
        listed = run_cli("sessions", "list", "--json", home=isolated_home)
        shown = run_cli("sessions", "show", earlier, "--json", home=isolated_home)
    assert listed.returncode == 0, listed.stderr
    sessions = json.loads(listed.stdout)["sessions"]
    assert [(s["id"], s["status"]) for s in sessions] == [(earlier, "completed")]
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["session"]["answer"] == ANSWER
