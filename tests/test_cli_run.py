"""`rlm-desktop run` as a user runs it: a subprocess, its exit code, stdout and stderr."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.engine.scripting import QUERY, TEST_MODEL, repl, scripted, still_alive
from tests.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[1]
DESIGN_KEYS = {
    "session_id",
    "status",
    "answer",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "turns",
    "sub_calls",
    "max_depth_reached",
    "wall_s",
}
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def drop_file_override() -> None:
    """In the child, before exec: give up root's power to read any file (chmod 000 then counts)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "rlm_desktop", "run", *args]


def cli(
    *args: str, env: dict[str, str] | None = None, unprivileged: bool = False
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args),
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=drop_file_override if unprivileged and os.geteuid() == 0 else None,
    )


def served(server: ScriptedServer, *args: str) -> list[str]:
    return ["--model", TEST_MODEL, "--api-base", server.base_url, "--query", QUERY, *args]


def assert_one_line_error(result: subprocess.CompletedProcess[str], mentions: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("rlm-desktop run: ")
    assert mentions in line


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.txt"
    path.write_text("".join(f"line {i}: amount {i % 7}\n" for i in range(300)), encoding="utf-8")
    return path


def missing(folder: Path) -> Path:
    return folder / "no-such-file.txt"


def binary_content(folder: Path) -> Path:
    path = folder / "blob.txt"
    path.write_bytes(bytes(range(256)) * 20)
    return path


def binary_kind(folder: Path) -> Path:
    path = folder / "scan.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    return path


def pipe(folder: Path) -> Path:
    path = folder / "pipe.txt"
    os.mkfifo(path)
    return path


def empty_folder(folder: Path) -> Path:
    path = folder / "empty"
    path.mkdir()
    return path


def below_a_file(folder: Path) -> Path:
    (folder / "plain.txt").write_text("text", encoding="utf-8")
    return folder / "plain.txt" / "inside.txt"


@pytest.mark.parametrize(
    "make",
    [missing, binary_content, binary_kind, pipe, empty_folder, below_a_file],
    ids=lambda make: make.__name__,
)
def test_a_bad_document_is_one_line_and_exit_2(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    path = make(tmp_path)
    result = cli("--query", QUERY, "--doc", str(path), "--model", TEST_MODEL, "--json")
    assert_one_line_error(result, str(path))


def test_an_unreadable_document_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "locked.txt"
    path.write_text("secret", encoding="utf-8")
    path.chmod(0)
    result = cli("--query", QUERY, "--doc", str(path), "--model", TEST_MODEL, unprivileged=True)
    assert_one_line_error(result, str(path))
    assert "ermission" in result.stderr


@pytest.mark.parametrize(
    ("flags", "mentions"),
    [
        (["--max-depth", "0"], "--max-depth"),
        (["--profile", "nope"], "unknown profile"),
        (["--concurrency", "0"], "--concurrency"),
        (["--price", "openai/test-model=cheap"], "price line 1"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(
    document: Path, flags: list[str], mentions: str
) -> None:
    result = cli("--query", QUERY, "--doc", str(document), "--model", TEST_MODEL, *flags)
    assert_one_line_error(result, mentions)


def test_no_document_is_one_line_and_exit_2() -> None:
    assert_one_line_error(cli("--query", QUERY, "--model", TEST_MODEL), "--doc")


def test_json_prints_one_object_and_keeps_secrets_from_model_code(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    turns = [repl("import os\nprint(dict(os.environ))"), repl("FINAL('The total is 42.')")]
    scripted_server.respond_with(scripted({QUERY: turns}))
    secrets = {"OPENAI_API_KEY": "sk-test-secret", "MY_SERVICE_TOKEN": "tok-4242-private"}
    result = cli(
        *served(scripted_server, "--doc", str(document), "--mode", "rlm", "--json"), env=secrets
    )

    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip().splitlines()) == 1
    output = json.loads(result.stdout)
    assert set(output) >= DESIGN_KEYS
    assert (output["status"], output["answer"], output["turns"]) == (
        "completed",
        "The total is 42.",
        2,
    )
    assert output["input_tokens"] > 0
    assert output["max_depth_reached"] == 1
    assert (isolated_home / "sessions.db").exists()
    sent = repr(scripted_server.chat_requests())
    assert "'HOME':" in sent
    assert "sk-test-secret" not in sent
    assert "tok-4242-private" not in sent
    headers = [value for h in scripted_server.headers for value in h.values()]
    assert not any("sk-test-secret" in value for value in headers)  # not OpenAI's key to --api-base
    assert "sk-test-secret" not in result.stderr


def test_a_run_without_an_answer_exits_1(scripted_server: ScriptedServer, document: Path) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("print(1)"), "Still not sure."]}))
    result = cli(
        *served(scripted_server, "--doc", str(document), "--mode", "rlm", "--max-turns", "1")
    )

    assert result.returncode == 1, result.stderr
    assert result.stdout == "Still not sure.\n"
    assert "Traceback" not in result.stderr


def test_a_run_past_its_time_limit_is_a_timeout(
    scripted_server: ScriptedServer, document: Path
) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("import time\ntime.sleep(30)")]}))
    args = served(scripted_server, "--doc", str(document), "--mode", "rlm", "--timeout", "0.5")
    result = cli(*args, "--json")

    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["status"] == "timeout"


def test_an_interrupt_exits_130_and_stops_the_workers(
    scripted_server: ScriptedServer, document: Path, tmp_path: Path
) -> None:
    marks = tmp_path / "pids"
    marks.mkdir()
    code = f"import os, time\nopen(os.path.join({str(marks)!r}, str(os.getpid())), 'w').close()\ntime.sleep(60)"
    scripted_server.respond_with(scripted({QUERY: [repl(code)]}))
    args = served(scripted_server, "--doc", str(document), "--mode", "rlm", "--json")
    process = subprocess.Popen(
        command(*args), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 30
    while not any(marks.iterdir()):
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, "the cell never started"
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=10)

    assert process.returncode == 130, err
    assert json.loads(out)["status"] == "cancelled"
    assert "Traceback" not in err
    (pid,) = (int(p.name) for p in marks.iterdir())
    assert asyncio.run(still_alive([pid])) == set()
