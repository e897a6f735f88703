"""`rlm-desktop run` says which sandbox ran the model code, in its closing line on stderr, as the
answer card does: `auto` tells what it took."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.engine.scripting import QUERY, TEST_MODEL, repl, scripted
from tests.scripted_server import ScriptedServer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")


@pytest.mark.parametrize(
    ("choice", "said"),
    [
        ("wasm", r"WebAssembly sandbox \(wasm\+wasmtime[\d.]+\)"),
        ("auto", r"kernel sandbox \([a-z+-]+\)"),
    ],
)
def test_the_closing_line_names_the_sandbox(
    choice: str,
    said: str,
    scripted_server: ScriptedServer,
    wasm_guest: Path,
    isolated_home: Path,
    tmp_path: Path,
) -> None:
    document = tmp_path / "note.txt"
    document.write_text("The launch is on Tuesday.\n", encoding="utf-8")
    scripted_server.respond_with(scripted({QUERY: [repl("import sys\nFINAL(sys.platform)")]}))
    done = run_cli("run", "--model", TEST_MODEL, "--api-base", scripted_server.base_url,
                   "--query", QUERY, "--doc", str(document), "--mode", "rlm",
                   "--sandbox", choice, home=isolated_home, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("wasi" if choice == "wasm" else "linux")
    closing = done.stderr.splitlines()[-1]
    assert closing.startswith("completed: "), done.stderr
    assert re.search(f", {said}$", closing), closing
