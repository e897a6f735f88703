"""`run --sandbox auto|kernel|wasm`: which sandbox runs model code, said in the run's JSON, with
one line when the choice cannot be had; the portable path (what Windows takes) run here by
forcing it (`RLM_DESKTOP_PORTABLE=1`); the scratch quota held under the wasm sandbox too."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rlm_desktop.portability import PORTABLE_ENV
from tests.cli import run_cli
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.small_disk import free_bytes, small_disk

MIB = 1024 * 1024


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("Zebrafish: 7 in tank A.\n")
    return path


def _run(server: ScriptedServer, document: Path, home: Path, *flags: str, **options: object):  # type: ignore[no-untyped-def]
    return run_cli(
        "run", "--query", "How many zebrafish?", "--doc", str(document), "--model", TEST_MODEL,
        "--api-base", server.base_url, "--mode", "rlm", "--json", *flags,
        home=home, timeout=300, **options,
    )  # fmt: skip


COUNT = "import re\nprint(re.findall(r'\\d+', context))"


def test_a_run_under_the_wasm_sandbox_says_so(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    scripted_server.respond_with(scripted(root=[repl(COUNT), repl("FINAL('7')")]))
    ran = _run(scripted_server, document, isolated_home, "--sandbox", "wasm")
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert (result["status"], result["answer"]) == ("completed", "7")
    assert result["sandbox"].startswith("wasm+wasmtime")
    shown = run_cli("sessions", "show", result["session_id"], "--json", home=isolated_home)
    turns = json.loads(shown.stdout)["turns"]
    assert turns[0]["stdout"].strip() == "['7']"


def test_the_portable_path_takes_the_wasm_sandbox_by_itself(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    scripted_server.respond_with(scripted(root=[repl(COUNT), repl("FINAL('7')")]))
    ran = _run(scripted_server, document, isolated_home, env={PORTABLE_ENV: "1"})
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["sandbox"].startswith("wasm")


def test_asking_for_a_kernel_sandbox_where_there_is_none_is_one_line(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    ran = _run(
        scripted_server, document, isolated_home, "--sandbox", "kernel", env={PORTABLE_ENV: "1"}
    )
    assert ran.returncode == 2
    assert "Traceback" not in ran.stderr
    (line,) = ran.stderr.strip().splitlines()
    assert "--sandbox" in line
    assert "no kernel sandbox" in line
    assert "use wasm or auto" in line
    assert scripted_server.chat_requests() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a small disk of the test's own")
def test_the_scratch_quota_holds_under_the_wasm_sandbox(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    fill = (
        "n = 0\nwhile True:\n"
        "    with open(f'hoard-{n}.bin', 'wb') as f:\n"
        "        f.write(b'x' * (1 << 20))\n"
        "    n += 1\n"
    )
    scripted_server.respond_with(scripted(root=[repl(fill), repl("FINAL('7')")]))
    with small_disk(isolated_home, 512 * MIB):
        before = free_bytes(isolated_home)
        ran = _run(
            scripted_server, document, isolated_home, "--sandbox", "wasm",
            "--scratch-quota", "64", "--cell-timeout", "60",
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        result = json.loads(ran.stdout)
        assert not (isolated_home / "scratch" / result["session_id"]).exists()
        assert free_bytes(isolated_home) > before - 8 * MIB
        shown = run_cli("sessions", "show", result["session_id"], "--json", home=isolated_home)
    filled, final = json.loads(shown.stdout)["turns"]
    assert "the REPL worker was stopped" in filled["error"]
    assert "may take at most 64 MB (setting scratch_quota_mb)" in filled["error"]
    assert (result["status"], result["answer"]) == ("completed", "7")


def test_the_first_wasm_run_on_a_machine_says_it_prepares_the_sandbox(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path, tmp_path: Path
) -> None:
    scripted_server.respond_with(scripted(root=[repl("FINAL('7')")]))
    fresh = {"RLM_DESKTOP_COMPILED": str(tmp_path / "compiled")}
    first = _run(scripted_server, document, isolated_home, "--sandbox", "wasm", env=fresh)
    again = _run(scripted_server, document, isolated_home, "--sandbox", "wasm", env=fresh)

    assert first.returncode == again.returncode == 0, first.stderr
    said = first.stderr.splitlines()
    assert said[0] == (
        "rlm-desktop run: preparing the WebAssembly sandbox for this machine (once; a few seconds)"
    )
    assert said[1].startswith("rlm-desktop run: the WebAssembly sandbox is ready (compiled in ")
    assert "preparing" not in again.stderr
