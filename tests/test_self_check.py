"""`rlm-desktop --self-check`: one line per check, the machine's real answers, exit 1 on a failure."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli import run_cli

CHECKS = (
    "imports",
    "data folder",
    "keyring",
    "price map",
    "REPL worker",
    "wasm sandbox",
    "document reader",
    "Qt platform",
    "Ray",
)
LINE = re.compile(r"^(ok|warn|FAIL)\s+([^:]+): (.+)$")


def check_lines(stdout: str) -> dict[str, tuple[str, str]]:
    header, *lines = stdout.strip().splitlines()
    assert header.startswith("rlm-desktop ")
    parsed = {}
    for line in lines:
        match = LINE.match(line)
        assert match, f"not a check line: {line!r}"
        parsed[match[2]] = (match[1], match[3])
    assert tuple(parsed) == CHECKS
    return parsed


def test_a_working_installation_passes_every_check(tmp_path: Path) -> None:
    from rlm_desktop.engine.sandbox.kernel.confine import landlock_abi

    done = run_cli("--self-check", home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    lines = check_lines(done.stdout)
    assert all(state != "FAIL" for state, _ in lines.values())
    assert lines["keyring"][0] == "warn"  # the tests' environment has no keyring on purpose
    assert "keyring.backends.fail.Keyring" in lines["keyring"][1]
    assert str(tmp_path / "home") in lines["data folder"][1]
    assert lines["Qt platform"] == ("ok", lines["Qt platform"][1])
    assert "plugin offscreen" in lines["Qt platform"][1]
    wasm_state, wasm = lines["wasm sandbox"]
    assert wasm_state == "ok"
    assert re.match(r"ran print\(1\) in wasm\+wasmtime[\d.]+ \(--sandbox wasm\)", wasm), wasm
    worker_state, worker = lines["REPL worker"]
    reader_state, reader = lines["document reader"]
    if landlock_abi() >= 4:
        assert worker_state == "ok"
        assert re.search(r"in the sandbox landlock\+\S+", worker), worker
        assert reader_state == "ok"
        assert re.fullmatch(r"read a file in the sandbox landlock\+\S+", reader), reader
    else:
        assert worker_state == reader_state == "warn"


def test_each_broken_part_is_one_failing_line_and_exit_1(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = run_cli(
        "--self-check",
        home=blocker / "home",
        env={"QT_QPA_PLATFORM": "no-such-platform"},
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    lines = check_lines(done.stdout)
    assert lines["data folder"][0] == "FAIL"
    assert "Not a directory" in lines["data folder"][1]
    assert lines["Qt platform"][0] == "FAIL"
    assert "no-such-platform" in lines["Qt platform"][1]
    assert lines["imports"][0] == "ok"
    assert lines["price map"][0] == "ok"


def test_the_wasm_check_compiles_the_guest_once_and_says_so(tmp_path: Path) -> None:
    compiled = tmp_path / "compiled"
    first = run_cli(
        "--self-check", home=tmp_path / "home", env={"RLM_DESKTOP_COMPILED": str(compiled)}
    )
    again = run_cli(
        "--self-check", home=tmp_path / "home", env={"RLM_DESKTOP_COMPILED": str(compiled)}
    )

    assert first.returncode == again.returncode == 0, first.stdout + again.stdout
    assert "compiled for this machine in" in check_lines(first.stdout)["wasm sandbox"][1]
    assert "compiled" not in check_lines(again.stdout)["wasm sandbox"][1]
    assert len(list(compiled.glob("*.cwasm"))) == 1
