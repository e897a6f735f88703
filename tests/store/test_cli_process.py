"""`rlm-desktop run` and `rlm-desktop sessions` as real processes: record, kill, review offline."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from rlm_desktop.paths import database_path
from tests.scripted_server import ScriptedServer
from tests.store.engine_script import API_KEY, MARKER, responder

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": API_KEY,
        "LOCAL_LLM_API_KEY": API_KEY,  # --api-base runs send the local server's key
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    }


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlm_desktop.cli", *argv],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def _run_argv(server: ScriptedServer, document: Path) -> list[str]:
    return [
        "run", "--query", "How many zebrafish are in tank A?", "--doc", str(document),
        "--model", "openai/test-model", "--api-base", server.base_url, "--mode", "rlm", "--json",
    ]  # fmt: skip


def test_unknown_id_exits_2_with_one_line() -> None:
    for argv in (
        ("show", "nope"),
        ("show", "nope", "--json"),
        ("export", "nope", "--format", "md"),
    ):
        result = _cli("sessions", *argv)
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1
        assert "'nope'" in result.stderr


def test_a_cli_run_is_reviewed_and_exported_offline(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    document = tmp_path / "tanks.txt"
    document.write_text("tank A: 7 zebrafish\n" * 50)
    scripted_server.respond_with(responder())
    ran = _cli(*_run_argv(scripted_server, document))
    assert ran.returncode == 0, ran.stderr
    session_id = json.loads(ran.stdout)["session_id"]
    scripted_server.stop()  # review needs no server

    shown = _cli("sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    detail = json.loads(shown.stdout)
    assert detail["session"]["status"] == "completed"
    assert [c["kind"] for c in detail["calls"]] == ["rlm", "llm"]
    assert MARKER in detail["turns"][0]["stdout"]
    assert detail["session"]["documents"][0]["name"] == "tanks.txt"

    listed = json.loads(_cli("sessions", "list", "--json").stdout)["sessions"]
    assert [s["id"] for s in listed] == [session_id]
    found = json.loads(_cli("sessions", "search", MARKER, "--json").stdout)["hits"]
    assert {hit["session_id"] for hit in found} == {session_id}

    for fmt in ("jsonl", "md", "otlp"):
        target = tmp_path / f"export.{fmt}"
        exported = _cli("sessions", "export", session_id[:12], "--format", fmt, "-o", str(target),
                        "--include-content")  # fmt: skip
        assert exported.returncode == 0, exported.stderr
        assert API_KEY not in target.read_text()
    for path in database_path().parent.glob("sessions.db*"):
        assert API_KEY.encode() not in path.read_bytes()

    assert _cli("sessions", "delete", session_id).returncode == 0
    assert _cli("sessions", "show", session_id).returncode == 2


def _kept(path: Path) -> tuple[list[str], int]:
    if not path.exists():
        return [], 0
    conn = sqlite3.connect(path, timeout=5)
    try:
        statuses = [row[0] for row in conn.execute("SELECT status FROM calls ORDER BY seq")]
        return statuses, conn.execute("SELECT count(*) FROM cells").fetchone()[0]
    except sqlite3.OperationalError:
        return [], 0
    finally:
        conn.close()


def test_a_cli_run_killed_with_sigkill_shows_interrupted(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    document = tmp_path / "tanks.txt"
    document.write_text("tank A: 7 zebrafish\n" * 50)
    scripted_server.respond_with(responder(stall_final=True))
    process = subprocess.Popen(
        [sys.executable, "-m", "rlm_desktop.cli", *_run_argv(scripted_server, document)],
        cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 90
    try:
        while _kept(database_path()) != (["running", "ok"], 1):
            assert process.poll() is None, "the run ended before it was killed"
            assert time.monotonic() < deadline, "the first turn was never written"
            time.sleep(0.05)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()

    listed = _cli("sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (session,) = json.loads(listed.stdout)["sessions"]
    assert session["status"] == "interrupted"
    detail = json.loads(_cli("sessions", "show", session["id"], "--json").stdout)
    assert [c["status"] for c in detail["calls"]] == ["interrupted", "ok"]
    assert MARKER in detail["turns"][0]["stdout"]
