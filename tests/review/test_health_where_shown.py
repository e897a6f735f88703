"""Run health where a user meets it on the command line: `sessions show` and `run --json`, each
run as a real subprocess over runs the real engine recorded against the scripted server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.review.health_runs import NOTE, TEST_MODEL, recorded
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer

FAILING = repl("print(crate_total)")
READ_HEAD = repl("print(context[:400])")
FINISH = repl('FINAL("Sector 3 holds 480 crates.")')


def _health(session_id: str, home: Path) -> dict[str, object]:
    result = run_cli("sessions", "health", session_id, "--json", home=home)
    assert result.returncode == 0, result.stderr
    shape: dict[str, object] = json.loads(result.stdout)
    return shape


def _record(server: ScriptedServer, *turns: str) -> str:
    store = Store(paths.database_path())
    try:
        return asyncio.run(recorded(store, server, scripted(root=list(turns)), documents=[NOTE]))
    finally:
        store.close()


def test_show_json_carries_the_findings_and_coverage_of_health(
    isolated_home: Path, scripted_server: ScriptedServer
) -> None:
    session_id = _record(scripted_server, FAILING, FAILING, READ_HEAD, FINISH)
    result = run_cli("sessions", "show", session_id, "--json", home=isolated_home)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    health = _health(session_id, isolated_home)
    assert shown["findings"] == health["findings"]
    assert shown["coverage"] == health["coverage"]
    assert shown["session"]["id"] == session_id  # what `show --json` carried before is still there
    assert {f["kind"] for f in shown["findings"]} >= {"weak_coder"}
    assert shown["coverage"]["documents"][0]["uncovered"] == [[400, len(NOTE.text)]]


def test_show_prints_one_line_per_finding_and_the_coverage_shares(
    isolated_home: Path, scripted_server: ScriptedServer
) -> None:
    session_id = _record(scripted_server, FAILING, FAILING, READ_HEAD, FINISH)
    result = run_cli("sessions", "show", session_id, home=isolated_home)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    findings = _health(session_id, isolated_home)["findings"]
    assert isinstance(findings, list)
    at = lines.index(f"Health: {fmt.plural(len(findings), 'finding')}")
    share = f"{400 / len(NOTE.text):.0%}"
    assert lines[at + 1] == f"  coverage {share}: {NOTE.name} {share}"
    assert lines[at + 2 : at + 2 + len(findings)] == [
        f"  {f['severity']} {f['kind']}: {f['message']}" for f in findings
    ]


def test_show_of_a_run_that_read_everything_shows_full_coverage(
    isolated_home: Path, scripted_server: ScriptedServer
) -> None:
    session_id = _record(scripted_server, repl("print(context)"), FINISH)
    result = run_cli("sessions", "show", session_id, home=isolated_home)
    assert result.returncode == 0, result.stderr
    findings = _health(session_id, isolated_home)["findings"]
    assert isinstance(findings, list)
    assert "weak_coder" not in {f["kind"] for f in findings}
    lines = result.stdout.splitlines()
    at = lines.index(f"Health: {fmt.plural(len(findings), 'finding')}")
    assert lines[at + 1] == f"  coverage 100%: {NOTE.name} 100%"


def test_run_json_adds_the_findings_and_coverage_of_the_run_just_saved(
    isolated_home: Path, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    document = tmp_path / NOTE.name
    document.write_text(NOTE.text, encoding="utf-8")
    scripted_server.respond_with(scripted(root=[FAILING, FAILING, READ_HEAD, FINISH]))
    result = run_cli(
        "run",
        "--model",
        TEST_MODEL,
        "--api-base",
        scripted_server.base_url,
        "--query",
        "How many crates in sector 3?",
        "--doc",
        str(document),
        "--mode",
        "rlm",
        "--json",
        home=isolated_home,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    health = _health(output["session_id"], isolated_home)
    assert output["findings"] == health["findings"]
    assert output["coverage"] == health["coverage"]
    assert ("weak_coder", "error_share") in {(f["kind"], f["rule"]) for f in output["findings"]}
    assert output["coverage"]["documents"][0]["uncovered"] == [[400, len(NOTE.text)]]
