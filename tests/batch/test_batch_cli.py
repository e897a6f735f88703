"""`rlm-desktop batch` as a real subprocess against the scripted server: twenty questions over
five folders, every row a stored session tagged with its batch, the results files holding what
the model answered with its sources and findings, per-row settings over the default, a total
budget that holds with rows in flight, and a resume after the process is interrupted."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop import paths
from rlm_desktop.batch.records import BatchRecords
from rlm_desktop.store import Store
from rlm_desktop.store.trials import list_sessions
from tests.batch.scripting import (
    INVENTING,
    MODELS,
    PRICES,
    expected,
    line_of,
    respond,
    rows,
    write_csv,
    write_jsonl,
)
from tests.batch.stored import completed_sessions, finished_rows, query
from tests.cli import run_cli, start_cli
from tests.scripted_server import ScriptedServer

DEFAULT = "model=openai/good-model,mode=rlm,depth=1"


def batch_args(server: ScriptedServer, questions: Path, *more: str) -> list[str]:
    return ["batch", "--questions", str(questions), "--setting", DEFAULT,
            "--api-base", server.base_url, *more]  # fmt: skip


def by_row(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {result["row_id"]: result for result in summary["results"]}


def kinds(result: dict[str, Any]) -> set[str]:
    return {finding["kind"] for finding in result["findings"]}


def test_twenty_questions_over_five_folders(
    server: ScriptedServer, work: Path, isolated_home: Path, tmp_path: Path
) -> None:
    entries = rows(20)
    entries[1].update(model="openai/other-model", mode="direct")
    entries[6].update(mode="direct")
    entries[7].update(model=f"openai/{INVENTING}")
    entries[10]["documents"] = "contracts/c0/*.txt;contracts/c0/annex.md"
    questions = write_csv(work / "questions.csv", entries, extra=("model", "mode"))
    out = tmp_path / "out"
    done = run_cli(*batch_args(server, questions, *PRICES, "--max-cost", "5", "--concurrency",
                               "3", "--out", str(out), "--json"),
                   home=isolated_home, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert {key: summary[key] for key in ("rows", "done", "failed", "skipped", "executor")} == {
        "rows": 20, "done": 20, "failed": 0, "skipped": 0, "executor": "local"
    }  # fmt: skip
    assert summary["out"] == str(out)
    assert 0 < summary["cost_usd"] < 5
    results = by_row(summary)
    assert list(results) == [entry["id"] for entry in entries]  # in the file's order
    direct = {entries[1]["id"], entries[6]["id"]}
    for entry in entries:
        result = results[entry["id"]]
        assert (result["status"], result["error"], result["question"]) == (
            "completed", None, entry["question"]
        )  # fmt: skip
        assert result["answer"].startswith(expected(entry)), result
        sources = [(s["quote"], s["document"], s["match"]) for s in result["sources"]]
        named = "contract.txt" if entry is entries[10] else f"c{entry['folder']}/contract.txt"
        if entry is entries[7]:
            assert [match for *_, match in sources] == ["not_found"]
            assert "brittle_answer" in kinds(result)
        else:
            quote = line_of(entry["label"], expected(entry))
            assert sources == [(quote, named, "exact")]
        assert ("short_input" in kinds(result)) == (entry["id"] not in direct)
    assert results[entries[10]["id"]]["documents"] == [
        "contracts/c0/*.txt",
        "contracts/c0/annex.md",
    ]

    tagged = query(isolated_home,
        "SELECT b.row_id, b.session_id, s.status, s.model, s.chosen_mode FROM batch_sessions b "
        "JOIN sessions s ON s.id = b.session_id WHERE b.batch_id = ?", summary["batch_id"])  # fmt: skip
    assert len(tagged) == 20
    for row_id, session_id, status, model, mode in tagged:
        entry = next(e for e in entries if e["id"] == row_id)
        assert results[row_id]["session_id"] == session_id
        assert status == "completed"
        assert model == entry.get("model", "openai/good-model")
        assert mode == entry.get("mode", "rlm")

    assert json.loads((out / "results.json").read_text()) == summary
    with (out / "results.csv").open(newline="", encoding="utf-8") as file:
        table = list(csv.DictReader(file))
    assert list(table[0]) == [
        "row_id", "question", "documents", "status", "answer", "sources", "cost_usd",
        "input_tokens", "output_tokens", "wall_s", "findings", "session_id", "executor", "node",
        "attempts", "error",
    ]  # fmt: skip
    assert [row["row_id"] for row in table] == [entry["id"] for entry in entries]
    first = table[0]
    assert first["answer"] == expected(entries[0])
    assert json.loads(first["sources"]) == [
        {"quote": line_of("party", expected(entries[0])), "document": "c0/contract.txt",
         "match": "exact"}
    ]  # fmt: skip
    assert [f["kind"] for f in json.loads(first["findings"])] == ["short_input"]
    assert set(json.loads(first["findings"])[0]) == {"kind", "message"}
    assert table[10]["documents"] == "contracts/c0/*.txt;contracts/c0/annex.md"

    store = Store(paths.database_path())
    try:
        listing = list_sessions(store, trials=False)
        records = BatchRecords(store)
        (record,) = records.all()
        stored = records.results(record.id)
        started = records.sessions(record.id)
    finally:
        store.close()
    assert (listing.rows, listing.hidden_trials) == ([], 20)  # the browser hides batch rows
    assert (record.id, record.questions, record.rows) == (
        summary["batch_id"], str(questions.resolve()), 20
    )  # fmt: skip
    assert (record.setting["model"], record.options["max_cost_usd"]) == ("openai/good-model", 5)
    assert {r.row_id: r.to_json() for r in stored} == by_row(summary)
    assert {s["session_id"] for s in started} == {r.session_id for r in stored}


def test_the_total_budget_holds_with_rows_in_flight(
    server: ScriptedServer, work: Path, isolated_home: Path
) -> None:
    entries = rows(12)
    questions = write_csv(work / "questions.csv", entries)
    # Output priced at 0, so that a run's reserved reply headroom costs nothing and the cap is
    # spent by what the runs read: enough for a few rows, not all.
    prices = [f"--price=openai/{model}=1,0" for model in MODELS]
    cap = 0.0045
    done = run_cli(*batch_args(server, questions, *prices, "--max-cost", str(cap),
                               "--concurrency", "3", "--json"), home=isolated_home, timeout=300)  # fmt: skip
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert 0 < summary["done"] < 12
    assert summary["failed"] == 0  # no row started that the cap then cut
    assert summary["done"] + summary["skipped"] == 12
    spent = query(isolated_home, "SELECT SUM(cost_usd) FROM llm_requests")[0][0]
    assert 0 < spent <= cap
    assert summary["cost_usd"] == pytest.approx(spent)
    skipped = [r for r in summary["results"] if r["status"] == "skipped"]
    assert len(skipped) == summary["skipped"]
    assert {r["error"] for r in skipped} == {"the total budget is spent"}
    assert all(r["session_id"] is None for r in skipped)
    for result in skipped:
        assert f"not started row {result['row_id']}: the total budget is spent" in done.stderr
    assert f"{summary['skipped']} rows not started: the total budget is spent" in done.stderr
    assert f"--resume {summary['batch_id']} --max-cost" in done.stderr
    assert len(query(isolated_home, "SELECT * FROM batch_sessions")) == summary["done"]

    raised = run_cli("batch", "--resume", summary["batch_id"], "--max-cost", "1", "--json",
                     home=isolated_home, timeout=300)  # fmt: skip
    assert raised.returncode == 0, raised.stderr
    assert f"{summary['skipped']} to run" in raised.stderr
    assert json.loads(raised.stdout)["done"] == 12
    assert completed_sessions(isolated_home) == {entry["id"]: 1 for entry in entries}


def test_an_interrupted_batch_resumes_where_it_stopped(work: Path, isolated_home: Path) -> None:
    entries = rows(20)
    entries[3]["documents"] = [entries[3]["documents"], "contracts/c4/annex.md"]
    entries[6]["mode"] = "direct"
    questions = write_jsonl(work / "questions.jsonl", entries, extra=("mode",))
    server = ScriptedServer(models=MODELS, latency_s=0.3).start()  # paces the rows
    server.respond_with(respond)
    try:
        process = start_cli(*batch_args(server, questions, "--concurrency", "2", "--json"),
                            home=isolated_home, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while len(finished_rows(isolated_home)) < 4 and process.poll() is None:
                assert time.monotonic() < deadline, "no four rows finished in two minutes"
                time.sleep(0.1)
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 130, stderr
        ((batch_id,),) = query(isolated_home, "SELECT id FROM batches")
        assert f"interrupted: resume with rlm-desktop batch --resume {batch_id}" in stderr
        before = finished_rows(isolated_home)
        assert 4 <= len(before) < 20
        cut = json.loads(stdout)
        assert (cut["done"], cut["skipped"]) == (len(before), 20 - len(before))
        assert {r["status"] for r in cut["results"] if r["row_id"] not in before} == {"not_run"}

        resumed = run_cli("batch", "--resume", batch_id, "--concurrency", "4", "--json",
                          home=isolated_home, timeout=300)  # fmt: skip
    finally:
        server.stop()
    assert resumed.returncode == 0, resumed.stderr
    assert f"{20 - len(before)} to run" in resumed.stderr
    after = finished_rows(isolated_home)
    assert set(after) == {entry["id"] for entry in entries}
    assert {row: after[row] for row in before} == before  # finished rows were not run again
    assert completed_sessions(isolated_home) == {entry["id"]: 1 for entry in entries}
    statuses = {status for (status,) in query(isolated_home, "SELECT status FROM sessions")}
    assert statuses <= {"completed", "cancelled", "interrupted"}
    summary = json.loads(resumed.stdout)
    assert (summary["batch_id"], summary["done"], summary["skipped"]) == (batch_id, 20, 0)
    for entry in entries:
        assert by_row(summary)[entry["id"]]["answer"].startswith(expected(entry))
    assert by_row(summary)[entries[3]["id"]]["documents"] == entries[3]["documents"]
