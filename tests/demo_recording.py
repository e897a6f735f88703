"""The recorded runs the app ships: made by a real run of the engine, never written by hand.

`record(folder)` starts the scripted OpenAI-compatible server on 127.0.0.1 with the replies of
a model that answers the welcome page's memos question well (a look at the documents, a batch
of `llm_query` sub-calls over the memos that mention Heron, a recursive `rlm_query` child that
decides which memo is the latest word, then the answer with verbatim sources), runs
`rlm-desktop run` over `resources/samples/memos` against it in a data folder of its own, and
exports the session with the documents' text (`sessions export --format jsonl
--with-documents`) into `folder`. `tools/record-demo` (`make demo-recording`) writes the shipped
files; `tests/test_demo_recording.py` checks the shipped files are what it makes today, apart
from ids and times (`comparable`).

The replies are streamed a little at a time (`WRITING_DELAY_S` between pieces), as a model
writes, so the recording keeps the shape of a reply being written for the replay to show.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from tests.cli import ROOT, run_cli
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import Reply, ScriptedServer

RECORDED = ROOT / "resources" / "samples" / "recorded"
MEMOS = ROOT / "resources" / "samples" / "memos"
MEMOS_FILE = "heron-memos.jsonl"
QUESTION = "What is Project Heron's budget, and when does it go live?"
CHILD_QUESTION = "Which of these memos is the latest word on Heron's budget and go-live date?"
MODEL = "openai/demo-model"
WRITING_DELAY_S = 0.02
"""Between streamed pieces of a reply (16 characters each): a model writing 800 characters a
second, so the recording spends its time as a run does, mostly on the replies being written."""

LOOK = """\
print("\\n".join(f"{meta['name']:45} {meta['chars']:>5} characters" for meta in context_meta))"""
NOTES = """\
heron = [i for i, text in enumerate(context) if "Heron" in text]
print(len(heron), "of", len(context), "memos mention Heron")
notes = llm_query_batched([
    "In one line: what does this memo say about Project Heron's budget and go-live date?"
    "\\n\\n" + context[i]
    for i in heron
])
for i, note in zip(heron, notes):
    print(context_meta[i]["name"], "->", note)"""
LATEST = f"""\
latest = rlm_query({CHILD_QUESTION!r}, context=[context[i] for i in heron])
print(latest)"""
ANSWER = """\
FINAL(
    "Project Heron's budget is €950,000 and it goes live in September 2025. The memo of "
    "5 March 2025 revised the €1.2 million and May 2025 approved in January; the Q1 summary "
    "confirms the September go-live.",
    sources=[
        "The Heron budget is revised **down to €950,000** (from €1.2 million).",
        "Go-live at Rotterdam moves from May to **September 2025**.",
        "Project Heron is on track for its September go-live.",
    ],
)"""
CHILD_DATES = """\
for text in context:
    title = text.splitlines()[0]
    date = next(line for line in text.splitlines() if line.startswith("**Date:**"))
    print(date.removeprefix("**Date:** "), "|", title)"""
CHILD_ANSWER = """\
FINAL("The 5 March 2025 memo (Project Heron: revised budget and dates): it replaces the "
      "January figures with €950,000 and a September 2025 go-live; the 2 April Q1 summary "
      "confirms September.")"""

ROOT_TURNS = (
    repl(LOOK, "First, which documents do I have?"),
    repl(NOTES, "Seven memos. I will ask about Heron in each memo that mentions it."),
    repl(LATEST, "The memos disagree: a later one revises an earlier one. Which is the latest?"),
    repl(ANSWER, "The 5 March memo revises the budget and the date; the answer, with quotes."),
)
CHILD_TURNS = (
    repl(CHILD_DATES, "Each memo's date and title, to order them."),
    repl(CHILD_ANSWER, "The latest memo on the budget and the date is the one of 5 March."),
)
NOTES_BY_TITLE = {
    "Board approves Project Heron": "Budget €1.2 million, go-live May 2025 at Rotterdam.",
    "Staffing changes": "No budget or date; Tomasz Wróbel takes over Heron on 1 April 2025.",
    "Warehouse footprint review": "No budget or date; Rotterdam has spare room after Heron.",
    "Project Heron: revised budget and dates": (
        "Budget revised down to €950,000 (from €1.2 million); go-live moves to September 2025."
    ),
    "Utrecht closure": "No budget; Heron now goes live in September.",
    "operations summary": "On track for the September go-live; €1.2 million was the first budget.",
}


def _note(prompt: str) -> Reply:
    """A sub-call's one-line note on the memo its prompt carries."""
    title = next((line for line in prompt.splitlines() if line.startswith("# ")), "")
    found = next(
        (note for key, note in NOTES_BY_TITLE.items() if key in title), "Nothing on Heron."
    )
    return _written(found)


def _written(content: str) -> Reply:
    return Reply(content=content, chunk_delay_s=WRITING_DELAY_S)


def record(folder: Path) -> Path:
    """Run the memos demo through the engine and export it into `folder`; the file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / MEMOS_FILE
    server = ScriptedServer(models=(MODEL.removeprefix("openai/"),)).start()
    server.respond_with(
        scripted(
            {
                QUESTION: [_written(turn) for turn in ROOT_TURNS],
                CHILD_QUESTION: [_written(turn) for turn in CHILD_TURNS],
            },
            sub=_note,
        )
    )
    try:
        with tempfile.TemporaryDirectory(prefix="rlm-demo-") as home:
            ran = run_cli(
                *("run", "--query", QUESTION, "--doc", str(MEMOS), "--model", MODEL),
                *("--api-base", server.base_url, "--mode", "rlm", "--max-depth", "2", "--json"),
                home=Path(home),
                timeout=300,
            )
            if ran.returncode != 0:
                raise RuntimeError(f"the demo run failed: {ran.stderr.strip()[-2000:]}")
            session_id = json.loads(ran.stdout)["session_id"]
            exported = run_cli(
                *("sessions", "export", session_id, "--format", "jsonl", "--with-documents"),
                *("-o", str(target)),
                home=Path(home),
            )
            if exported.returncode != 0:
                raise RuntimeError(f"the demo export failed: {exported.stderr.strip()}")
    finally:
        server.stop()
    return target


VARYING_KEYS = re.compile(
    r"(^|_)(id|ids|ts|at|time|timestamp|execution_time|duration_s|wall_s|latency_s|started|"
    r"ended|base_url|api_base|path|sandbox|arrivals)$"
)
"""Keys whose values differ between two recordings of the same run: ids, clocks, the server's
address, the data folder and the machine's sandbox."""


def comparable(line: dict[str, Any] | list[Any] | Any) -> Any:
    """A recorded line with what differs between recordings (`VARYING_KEYS`) blanked, and ids
    and timings inside text (`call-…`, session ids, "ran in 0.36 s") replaced by a placeholder."""
    if isinstance(line, dict):
        return {
            key: "…" if VARYING_KEYS.search(str(key)) else comparable(value)
            for key, value in line.items()
        }
    if isinstance(line, list):
        return [comparable(item) for item in line]
    if isinstance(line, str):
        return re.sub(r"\b[0-9a-f]{8,}\b|\bcall-[\w-]+|\b\d+\.\d+ s\b", "…", line)
    return line


def comparable_file(path: Path) -> list[Any]:
    """Every line of a recorded JSONL file, `comparable`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [comparable(json.loads(line)) for line in lines if line.strip()]
