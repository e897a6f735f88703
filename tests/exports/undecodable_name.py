"""A real run through the CLI over a document whose file name is not UTF-8: `caf\\xe9.txt` in
Latin-1, which Python keeps as a lone surrogate (`caf\\udce9.txt`). The name reaches the first
user message, a variable and what a cell printed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.cli import run_cli
from tests.conftest import TEST_MODEL
from tests.engine.scripting import repl, scripted
from tests.scripted_server import ScriptedServer

SPELLED = "docs/caf\\udce9.txt"
"""The name inside a text (a message, a cell's output, a variable), as the tables and every export
show it: the lone surrogate spelled as its escape."""
LISTED = "docs/caf\ufffd.txt"
"""The name in a list of the documents, as the documents' table shows it (U+FFFD for the byte)."""
NAME_CODE = "name = context_meta[0]['name']\nprint(name)"


def run_over_undecodable_name(
    server: ScriptedServer, folder: Path, home: Path, *flags: str
) -> subprocess.CompletedProcess[str]:
    """`rlm-desktop run --json` over `folder/docs/caf\\xe9.txt` (made here), against `server`,
    whose model prints the document's name and then answers 7; `flags` are added to the run."""
    docs = folder / "docs"
    docs.mkdir()
    with open(os.path.join(os.fsencode(docs), b"caf\xe9.txt"), "wb") as file:
        file.write(b"Zebrafish: 7 in tank A.\n")
    server.respond_with(scripted(root=[repl(NAME_CODE), repl("FINAL(7)")]))
    return run_cli(
        "run", "--query", "What is here?", "--doc", str(docs), "--model", TEST_MODEL,
        "--api-base", server.base_url, "--mode", "rlm", "--json", *flags, home=home,
    )  # fmt: skip
