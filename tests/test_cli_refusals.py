"""Refused calls are summarised on stderr, each still refused to the model and recorded.

Model code chooses how often it calls: a prompt injection in a document can make it loop
`llm_query` tens of thousands of times after the sub-call budget is spent. Each call is refused
(the model's code gets the error every time), but the terminal gets one line for the first refusal
of each cap and one count at the end, not a line per call.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import run_cli
from tests.engine.scripting import QUERY, TEST_MODEL, observation_after, repl, scripted
from tests.scripted_server import ScriptedServer

CALLS = 20_000
CAP = 3
LOOP = f"""
told = []
for i in range({CALLS}):
    try:
        llm_query(f"question {{i}}")
    except Exception as error:
        told.append(f"{{type(error).__name__}}: {{error}}")
print("refused", len(told), "distinct", len(set(told)), "last", told[-1])
"""


def test_a_flood_of_refused_calls_is_one_line_and_a_count(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("North: 12\nSud: 30\n", encoding="utf-8")
    scripted_server.respond_with(scripted({QUERY: [repl(LOOP), repl("FINAL('done')")]}))

    result = run_cli(
        "run", "--query", QUERY, "--doc", str(document), "--model", TEST_MODEL,
        "--api-base", scripted_server.base_url, "--mode", "rlm", "--max-sub-calls", str(CAP),
        "--json", home=isolated_home, timeout=600,
    )  # fmt: skip

    assert result.returncode == 1, result.stderr[-2000:]
    output = json.loads(result.stdout)
    assert (output["status"], output["answer"], output["sub_calls"]) == (
        "budget_exceeded",
        "done",
        CAP,
    )
    budget_lines = [line for line in result.stderr.splitlines() if line.startswith("budget:")]
    assert budget_lines == [
        f"budget: sub-call budget exhausted: {CAP} of {CAP} used",
        f"budget: --max-sub-calls refused {CALLS - CAP - 1:,} more calls",
    ], result.stderr[-2000:]
    assert len(result.stderr.splitlines()) < 20, result.stderr[-2000:]
    assert (
        f"refused {CALLS - CAP} distinct 1 last BudgetExceededError: sub-call budget exhausted: "
        f"{CAP} of {CAP} used"
    ) in observation_after(scripted_server, 0)
    shown = run_cli("sessions", "show", output["session_id"], "--json", home=isolated_home)
    session = json.loads(shown.stdout)
    assert session["session"]["status"] == "budget_exceeded"
    assert [call["kind"] for call in session["calls"]].count("llm") == CAP
