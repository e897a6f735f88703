"""`rlm-desktop sessions health`, run as a real subprocess over a session a real run recorded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.review.health_runs import NOTE, recorded
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

FAILING = repl("print(crate_total)")
FINISH = repl('FINAL("Sector 3 holds 480 crates.")')


@pytest.fixture
def session_id(isolated_home: Path, scripted_server: ScriptedServer) -> Iterator[str]:
    """A run whose code keeps raising, over a short note it reads the first 400 characters of."""
    import asyncio

    store = Store(paths.database_path())
    responder = scripted(root=[FAILING, FAILING, repl("print(context[:400])"), FINISH])
    try:
        yield asyncio.run(recorded(store, scripted_server, responder, documents=[NOTE]))
    finally:
        store.close()


def test_health_json_carries_findings_and_coverage(session_id: str, isolated_home: Path) -> None:
    result = run_cli("sessions", "health", session_id[:17], "--json", home=isolated_home)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["session_id"] == session_id
    kinds = {(f["kind"], f["rule"]) for f in report["findings"]}
    assert kinds == {
        ("weak_coder", "error_share"),
        ("weak_coder", "repeated_error"),
        ("short_input", "direct_would_do"),
    }
    share = next(f for f in report["findings"] if f["rule"] == "error_share")
    root = share["calls"][0]
    assert share["turns"] == [[root, 0], [root, 1]]
    assert set(share) == {
        "kind",
        "rule",
        "severity",
        "message",
        "advice",
        "calls",
        "turns",
        "figures",
    }
    (document,) = report["coverage"]["documents"]
    assert document["name"] == NOTE.name
    assert document["uncovered"] == [[400, len(NOTE.text)]]
    assert report["coverage"]["share"] == round(400 / len(NOTE.text), 4)


def test_health_prints_findings_with_evidence_and_advice(
    session_id: str, isolated_home: Path
) -> None:
    result = run_cli("sessions", "health", session_id, home=isolated_home)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"Health of session {session_id} (completed)"
    assert (
        f"  {NOTE.name}: {400 / len(NOTE.text):.0%} of {len(NOTE.text):,} characters; unread 400–{len(NOTE.text):,}"
        in lines
    )
    at = lines.index(next(line for line in lines if "weak_coder (error_share)" in line))
    assert lines[at + 1] == "    evidence: c1 turn 1, c1 turn 2"
    assert lines[at + 2].startswith("    advice: ")


def test_an_unknown_session_is_one_line_and_exit_2(isolated_home: Path) -> None:
    Store(paths.database_path()).close()
    result = run_cli("sessions", "health", "no-such-run", home=isolated_home)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "rlm-desktop sessions: no session 'no-such-run': run `rlm-desktop sessions list` to see "
        "the ids"
    ]


def test_health_lists_the_answers_sources_with_their_states(
    isolated_home: Path, scripted_server: ScriptedServer
) -> None:
    import asyncio

    made_up = "Sector 3 was emptied in March and its crates sent north."
    cited = repl(
        f'FINAL("Sector 3 holds 9 crates.", sources=["Sector 3 holds 9 crates", {made_up!r}])'
    )
    store = Store(paths.database_path())
    try:
        run = asyncio.run(
            recorded(store, scripted_server, scripted(root=[cited]), documents=[NOTE])
        )
    finally:
        store.close()
    shown = run_cli("sessions", "health", run, home=isolated_home)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    start = lines.index("Sources: 1 of 2 sources found in the documents")
    assert lines[start + 1] == (
        f"    [1] found word for word · note.txt, characters {NOTE.text.index('Sector 3'):,}–"
        f"{NOTE.text.index('Sector 3') + 23:,} · given as a source"
    )
    assert lines[start + 2] == "      “Sector 3 holds 9 crates”"
    assert lines[start + 3] == "  ! [2] not in the documents · given as a source"
    assert "unsupported_quote" in shown.stdout
    summary = run_cli("sessions", "show", run, home=isolated_home)
    assert "Sources: 1 of 2 sources found in the documents" in summary.stdout
