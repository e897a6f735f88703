"""A bad questions file (or bad flags) is one line naming `FILE:LINE` and what to write
instead, exit 2, no traceback, and nothing recorded: no batch, no session."""

from __future__ import annotations

from pathlib import Path

from tests.batch.scripting import GOOD
from tests.batch.stored import query
from tests.cli import run_cli
from tests.scripted_server import ScriptedServer

ROW = "What is the party of this contract?,contracts/c0"

FILES = {
    "no_documents.csv": ("question\nWho?\n", ":1: no documents column"),
    "no_question.csv": ("documents\ncontracts/c0\n", ":1: no question column"),
    "unknown_column.csv": (f"question,documents,speed\n{ROW},fast\n", ":1: unknown column 'speed'"),
    "unknown_key.jsonl": (
        '{"question": "Who?", "documents": "contracts/c0"}\n'
        '{"question": "Who?", "documents": "contracts/c1", "speed": "fast"}\n',
        ":2: unknown key 'speed'",
    ),
    "missing_path.csv": (
        f"question,documents\n{ROW}\nWho?,contracts/nope\n",
        ":3: 'contracts/nope' does not exist",
    ),
    "empty_glob.csv": (
        "question,documents\nWho?,contracts/*/*.pdf\n",
        ":2: 'contracts/*/*.pdf' matches nothing",
    ),
    "no_documents_named.jsonl": ('{"question": "Who?", "documents": []}\n', ":1: no documents"),
    "bad_line.jsonl": (
        '{"question": "Who?", "documents": "contracts/c0"}\n\n{"question": "Who?", \n',
        ":3: not JSON",
    ),
    "no_question.jsonl": ('{"documents": "contracts/c0"}\n', ':1: no "question"'),
    "empty.csv": ("", ":1: the file is empty"),
    "blank.jsonl": ("\n  \n", ":1: the file is empty"),
    "header_only.csv": ("question,documents\n", ":1: no questions"),
    "bad_mode.csv": (f"question,documents,mode\n{ROW},fast\n", ":2: mode must be rlm, direct"),
    "bad_depth.jsonl": (
        '{"question": "Who?", "documents": "contracts/c0", "depth": "deep"}\n',
        ":1: depth must be a whole number",
    ),
    "same_id.csv": (
        f"id,question,documents\na,{ROW}\na,{ROW}\n",
        ":3: row id 'a' is also the id of line 2",
    ),
    "quoted.csv": (
        f'question,documents\n"Who signed,\nand when?",contracts/c0\n{ROW},nope\n',
        ":4: 3 cells but the header has 2 columns",
    ),
}
"""Each file's text and what its one line of error must say (after the file's path)."""


def test_bad_files_are_one_line_naming_the_line_and_nothing_is_recorded(
    server: ScriptedServer, work: Path, isolated_home: Path
) -> None:
    for name, (text, said) in FILES.items():
        path = work / name
        path.write_text(text, encoding="utf-8")
        done = run_cli("batch", "--questions", str(path), "--api-base", server.base_url,
                       "--setting", f"model=openai/{GOOD}", "--price", f"openai/{GOOD}=1,2",
                       "--max-cost", "1", home=isolated_home)  # fmt: skip
        assert done.returncode == 2, (name, done.stderr)
        assert f"rlm-desktop batch: {path}{said}" in done.stderr, (name, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, (name, done.stderr)
        assert "Traceback" not in done.stderr
    assert query(isolated_home, "SELECT COUNT(*) FROM batches") in ([], [(0,)])
    assert query(isolated_home, "SELECT COUNT(*) FROM sessions") in ([], [(0,)])


def test_bad_flags_are_one_line(server: ScriptedServer, work: Path, isolated_home: Path) -> None:
    questions = work / "questions.csv"
    questions.write_text(f"question,documents\n{ROW}\n", encoding="utf-8")
    cases = [
        ([], "--questions is missing"),
        (["--questions", str(work / "absent.csv")], "is not a file"),
        (["--questions", str(questions), "--setting", "model=openai/x,speed=fast"],
         "'speed=fast' is not understood"),
        (["--questions", str(questions), "--concurrency", "0"], "--concurrency must be at least 1"),
        (["--questions", str(questions), "--setting", "model=openai/absent-model"],
         "--setting model 'openai/absent-model'"),
        (["--resume", "nope"], "--resume 'nope' is not a stored batch"),
        (["--resume", "nope", "--questions", str(questions)], "--questions cannot change"),
    ]  # fmt: skip
    for flags, said in cases:
        done = run_cli("batch", *flags, "--api-base", server.base_url, home=isolated_home)
        assert done.returncode == 2, (flags, done.stderr)
        assert said in done.stderr, (flags, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, (flags, done.stderr)
        assert "Traceback" not in done.stderr
    assert query(isolated_home, "SELECT COUNT(*) FROM batches") in ([], [(0,)])
