"""A folder larger than the machine's memory allows is refused before anything is read: one line
saying how big, what the limit is and what to do, never a run killed for want of memory halfway.

The limit comes from the available memory and the peak a run was measured to hold per byte of
text (`memory_room.PEAK_FACTOR`); `RLM_DESKTOP_MAX_DOCUMENTS_MB` sets it by hand, which is how
these tests bring it down to a few MB, as a user would.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import psutil
import pytest

from rlm_desktop.documents import LoadOptions, load_paths
from rlm_desktop.documents.memory_room import BASE_BYTES, LIMIT_ENV, PEAK_FACTOR, documents_limit
from tests.cli import run_cli
from tests.engine.scripting import QUERY, TEST_MODEL, repl, scripted
from tests.scripted_server import ScriptedServer


def make_folder(folder: Path, files: int, size: int = 100_000) -> Path:
    folder.mkdir(parents=True)
    for number in range(files):
        (folder / f"report-{number:03}.txt").write_text(f"report {number}\n" + "x" * size)
    return folder


def test_a_folder_over_the_limit_is_refused_before_any_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_folder(tmp_path / "reports", 30)
    monkeypatch.setenv(LIMIT_ENV, "2")
    opened: list[Path] = []

    result = load_paths([folder], LoadOptions(on_file=opened.append))

    assert opened == []
    assert result.documents == []
    assert [error.path for error in result.errors] == [folder]
    message = result.errors[0].message
    assert message.startswith("the documents weigh 2.9 MB together, over the 2.0 MB limit")
    assert f"{LIMIT_ENV}=2" in message
    assert "load fewer files" in message
    assert "more memory" in message


def test_under_the_limit_everything_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_folder(tmp_path / "reports", 30)
    monkeypatch.setenv(LIMIT_ENV, "4")

    result = load_paths([folder])

    assert len(result.documents) == 30
    assert result.errors == []


def test_the_files_named_together_count_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = make_folder(tmp_path / "first", 12)
    second = make_folder(tmp_path / "second", 12)
    monkeypatch.setenv(LIMIT_ENV, "2")

    result = load_paths([first, second])

    assert result.documents == []
    assert len(result.errors) == 1
    assert "2.3 MB together" in result.errors[0].message


def test_without_a_setting_the_limit_is_what_the_available_memory_leaves_for_documents(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LIMIT_ENV, raising=False)
    expected = (psutil.virtual_memory().available - BASE_BYTES) / PEAK_FACTOR

    room = documents_limit()

    assert abs(room.limit_bytes - expected) < 0.05 * expected
    assert "available memory" in room.why


@pytest.mark.parametrize("value", ["lots", "0", "-5", "1e999"])
def test_a_bad_setting_is_one_line_saying_how_to_fix_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    folder = make_folder(tmp_path / "reports", 2)
    monkeypatch.setenv(LIMIT_ENV, value)

    result = load_paths([folder])

    assert result.documents == []
    assert [error.message for error in result.errors] == [
        f"{LIMIT_ENV}={value} is not a number of megabytes; set it to a positive number "
        "(500 for 500 MB) or unset it"
    ]


def test_the_command_line_refuses_the_folder_with_one_line_and_exit_2(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    folder = make_folder(tmp_path / "reports", 30)
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('read')")]}))

    done: subprocess.CompletedProcess[str] = run_cli(
        "run", "--model", TEST_MODEL, "--query", QUERY, "--mode", "rlm", "--doc", str(folder),
        "--api-base", scripted_server.base_url, "--json",
        home=isolated_home, env={LIMIT_ENV: "2"}, timeout=120,
    )  # fmt: skip

    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"rlm-desktop run: {folder}: the documents weigh 2.9 MB together")
    assert "Traceback" not in done.stderr
    assert scripted_server.chat_requests() == []


def test_the_same_folder_under_the_limit_runs(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    folder = make_folder(tmp_path / "reports", 30)
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL(len(context))")]}))

    done = run_cli(
        "run", "--model", TEST_MODEL, "--query", QUERY, "--mode", "rlm", "--doc", str(folder),
        "--api-base", scripted_server.base_url, "--json",
        home=isolated_home, env={LIMIT_ENV: "4"}, timeout=120,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["answer"] == "30"
