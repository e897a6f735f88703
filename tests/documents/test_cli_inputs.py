"""What `rlm-desktop run` does with the documents it is given, as a user sees it: a subprocess.

Bad `--doc` paths are named one per line and the run goes on with the rest; links out of a folder
stay out of the context and the database; the time limit covers loading; file names print inert.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.documents.makers import make_slow_pdf
from tests.engine.scripting import QUERY, TEST_MODEL, repl, scripted
from tests.scripted_server import ScriptedServer

LEDGER = "".join(f"line {i}: amount {i % 7}\n" for i in range(50))
SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-not-for-models\n"
HOSTILE_NAME = "evil\n\x1b[31mred\x1b]0;pwned\x07.txt"
HOSTILE_SHOWN = "evil\\n\\x1b[31mred\\x1b]0;pwned\\x07.txt"


def run(
    home: Path, *args: str, server: ScriptedServer | None = None
) -> subprocess.CompletedProcess[str]:
    served = ["--model", TEST_MODEL, "--query", QUERY, "--mode", "rlm"]
    if server is not None:
        served += ["--api-base", server.base_url]
    return run_cli("run", *served, *args, home=home, timeout=120)


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.txt"
    path.write_text(LEDGER, encoding="utf-8")
    return path


def test_each_bad_doc_is_named_and_the_run_goes_on_with_the_rest(
    scripted_server: ScriptedServer, tmp_path: Path, ledger: Path, isolated_home: Path
) -> None:
    missing, fake = tmp_path / "missing.txt", tmp_path / "fake.pdf"
    fake.write_text("not a pdf at all", encoding="utf-8")
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL(len(context_meta))")]}))

    done = run(
        isolated_home,
        *("--doc", str(missing), "--doc", str(ledger), "--doc", str(fake), "--json"),
        server=scripted_server,
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "1"
    not_loaded = [line for line in done.stderr.splitlines() if "not loaded" in line]
    assert not_loaded == [
        f"rlm-desktop run: not loaded: {missing}: no such file or folder; check the path",
        f"rlm-desktop run: not loaded: {fake}: not a PDF file (no %PDF header); re-export it "
        "from the program that made it, or repair it (e.g. `qpdf in.pdf out.pdf`)",
    ]
    assert "Traceback" not in done.stderr


def test_when_nothing_loads_every_bad_doc_is_named_and_the_exit_code_is_2(
    tmp_path: Path, isolated_home: Path
) -> None:
    missing, empty = tmp_path / "missing.txt", tmp_path / "empty.md"
    empty.touch()

    done = run(isolated_home, "--doc", str(missing), "--doc", str(empty))

    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"rlm-desktop run: not loaded: {missing}: no such file or folder; check the path",
        f"rlm-desktop run: not loaded: {empty}: empty file (0 bytes); check that it is the file "
        "you meant",
        "rlm-desktop run: none of the --doc paths could be loaded; fix or drop them",
    ]


def test_a_link_out_of_a_folder_stays_out_of_the_context_and_the_database(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    key = tmp_path / "dot-ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text(SECRET, encoding="utf-8")
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "ledger.txt").write_text(LEDGER, encoding="utf-8")
    (folder / "notes.txt").symlink_to(key)
    scripted_server.respond_with(scripted({QUERY: [repl("print(context)\nFINAL('seen')")]}))

    done = run(isolated_home, "--doc", str(folder), "--json", server=scripted_server)

    assert done.returncode == 0, done.stderr
    assert (
        f"rlm-desktop run: left out {folder / 'notes.txt'}: link to a file outside the folder "
        f"({key}); to load it, open that file directly"
    ) in done.stderr.splitlines()
    assert "not-for-models" not in json.dumps(scripted_server.chat_requests())
    database = (isolated_home / "sessions.db").read_bytes()
    assert b"line 49: amount 0" in database  # the document was stored
    assert b"not-for-models" not in database


def test_the_time_limit_covers_loading_the_documents(
    scripted_server: ScriptedServer, tmp_path: Path, ledger: Path, isolated_home: Path
) -> None:
    bomb = make_slow_pdf(tmp_path / "bomb.pdf")
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('too late')")]}))

    done = run(
        isolated_home,
        *("--doc", str(ledger), "--doc", str(bomb), "--timeout", "3", "--json"),
        server=scripted_server,
    )

    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["status"] == "timeout"
    assert (
        f"rlm-desktop run: not loaded: {bomb}: the run's time limit ran out while it was being "
        "read, so reading it was stopped; raise the time limit or load fewer files"
    ) in done.stderr.splitlines()


def test_hostile_file_names_print_escaped_in_run_and_sessions_show(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / HOSTILE_NAME).write_text(LEDGER, encoding="utf-8")
    (folder / ("scan\x1b[2J.gif")).write_bytes(b"GIF89a" + bytes(64))
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('ok')")]}))

    done = run(isolated_home, "--doc", str(folder), "--json", server=scripted_server)
    assert done.returncode == 0, done.stderr
    shown = run_cli("sessions", "show", json.loads(done.stdout)["session_id"], home=isolated_home)

    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in done.stderr + shown.stdout
    assert f"rlm-desktop run: left out {folder}/scan\\x1b[2J.gif: image file" in done.stderr
    [document] = [line for line in shown.stdout.splitlines() if line.startswith("Document:")]
    assert document == (
        f"Document: inbox/{HOSTILE_SHOWN} ({len(LEDGER):,} characters) {folder}/{HOSTILE_SHOWN}"
    )
