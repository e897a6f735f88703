"""The evaluation scores the answers' sources where the task knows its gold location: real runs
of the engine over the scripted server (a model that quotes the gold, one that quotes a real but
wrong passage, one that makes a quote up), read back from the store, in the summary, the
history and `eval --json`; and the rule that says when a source cites the gold."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Credentials
from rlm_desktop.evaluation.history import reopen_view
from rlm_desktop.evaluation.needle import NEEDLE
from rlm_desktop.evaluation.opening import create_evaluation
from rlm_desktop.evaluation.options import EvaluationOptions
from rlm_desktop.evaluation.records import RESULTS, EvaluationRecords
from rlm_desktop.evaluation.settings import parse_setting
from rlm_desktop.evaluation.source_scores import MAX_OUTSIDE_CHARS, cited_gold
from rlm_desktop.evaluation.summary import summarize_all
from rlm_desktop.evaluation.task_sets import TaskSpec, generate
from rlm_desktop.evaluation.tasks import GoldSpan, Task
from rlm_desktop.evaluation.trial import TrialResult
from rlm_desktop.review.health import session_health
from rlm_desktop.review.health.sources import CheckedSource
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.evaluation.scripting import MADE_UP, MODELS, PRICES, numeric_tasks_file, responder
from tests.scripted_server import ScriptedServer

SPEC = TaskSpec(kinds=("needle", "aggregate", "code", "pairs"), lengths=(300,), seed=0, count=2)
SETTINGS = (
    "honest:model=openai/good-model,mode=rlm,depth=1",
    "wrong:model=openai/bad-model,mode=rlm,depth=1",
    "inventing:model=openai/inventing-model,mode=rlm,depth=1",
)
SOURCE_KEYS = {"source_gold_share", "source_gold_runs", "not_found_share", "sources_checked",
               "sources_not_found"}  # fmt: skip
OLD_KEYS = {"name", "runs", "score_mean", "score_ci95", "cost_mean", "cost_median", "cost_p95",
            "wall_mean", "sub_calls_mean", "failures"}  # fmt: skip


def no_key(model: str, api_base: str | None) -> Credentials:
    return Credentials()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    server = ScriptedServer(models=MODELS).start()
    yield server
    server.stop()


def test_generated_tasks_know_where_their_gold_is() -> None:
    tasks = {task.id: task for task in generate(SPEC)}
    for task in tasks.values():
        for span in task.gold_spans:
            text = span.text(task.documents)
            assert text.strip()
            assert text == text.strip()
    needle = tasks["needle-300-s0-0"]
    [span] = needle.gold_spans
    assert span.text(needle.documents) == NEEDLE.format(
        key=needle.details["key"], value=needle.answer
    )
    counted = tasks["aggregate-300-s0-0"]
    assert counted.details["question_kind"] == "count"
    assert len(counted.gold_spans) == int(counted.answer)
    lines = counted.documents[0][1].split("\n")
    assert all(span.text(counted.documents) in lines for span in counted.gold_spans)
    where = tasks["code-300-s0-0"]
    assert where.details["question_kind"] == "where"
    [definition] = where.gold_spans
    target = re.search(r"`(\w+)`", where.question)
    assert target is not None
    assert definition.text(where.documents).startswith(f"def {target.group(1)}(value):")
    assert where.documents[definition.document_index][0] == where.answer
    calls = tasks["code-300-s0-1"]
    assert calls.details["question_kind"] == "calls"
    path = [span.text(calls.documents) for span in calls.gold_spans]
    assert path[0].startswith(f"def {calls.answer}(value):")
    assert len(path) >= 2
    assert all(not task.gold_spans for task in tasks.values() if task.kind == "pairs")


async def test_sources_are_scored_per_trial_and_per_setting(server: ScriptedServer) -> None:
    tasks = generate(SPEC)
    server.respond_with(responder(tasks))
    settings = [parse_setting(text) for text in SETTINGS]
    options = EvaluationOptions(api_base=server.base_url, concurrency=3)
    store = Store(paths.database_path())
    try:
        evaluation = create_evaluation(
            store, SPEC, settings, options, folders=paths.engine_folders(), credentials=no_key
        )
        results = await evaluation.run()
        honest_needle = next(
            r for r in results if r.setting == "honest" and r.task_id == "needle-300-s0-0"
        )
        assert honest_needle.session_id is not None
        shown = session_health(store, honest_needle.session_id).sources
        view = reopen_view(store, evaluation.evaluation_id)
    finally:
        store.close()
    assert len(results) == 3 * len(tasks)
    assert all(r.status == "completed" for r in results)
    by_task = {task.id: task for task in tasks}
    with_gold = [task for task in tasks if task.gold_spans]
    assert {task.kind for task in with_gold} == {"needle", "aggregate", "code"}

    def scores(setting: str) -> dict[str, float | None]:
        return {r.task_id: r.source_score for r in results if r.setting == setting}

    def on_gold(value: float) -> dict[str, float | None]:
        return {task.id: value if task.gold_spans else None for task in tasks}

    assert scores("honest") == on_gold(1.0)
    assert scores("wrong") == on_gold(0.0)
    assert scores("inventing") == on_gold(0.0)
    for r in results:
        wanted = len(by_task[r.task_id].gold_spans)
        given = {"honest": wanted, "wrong": 1, "inventing": 1}[r.setting]
        assert (r.gold_spans, r.sources_checked) == (wanted, given)
        assert r.sources_not_found == (1 if r.setting == "inventing" else 0)
    [source] = shown
    assert (source.match, source.document_index) == ("exact", 0)
    needle = by_task["needle-300-s0-0"]
    assert source.quote == needle.gold_spans[0].text(needle.documents)

    rows = {s.name: s for s in summarize_all([s.name for s in settings], results)}
    gold_runs = len(with_gold)
    all_gold = sum(len(task.gold_spans) for task in tasks)
    assert (rows["honest"].source_gold_share, rows["honest"].source_gold_runs) == (1.0, gold_runs)
    assert (rows["honest"].sources_checked, rows["honest"].not_found_share) == (all_gold, 0.0)
    assert (rows["wrong"].source_gold_share, rows["wrong"].not_found_share) == (0.0, 0.0)
    assert rows["wrong"].sources_checked == len(tasks)
    assert rows["inventing"].score_mean == 1.0
    assert (rows["inventing"].source_gold_share, rows["inventing"].not_found_share) == (0.0, 1.0)
    assert rows["inventing"].sources_not_found == len(tasks)
    for row in rows.values():
        assert set(row.to_json()) >= SOURCE_KEYS | OLD_KEYS

    assert view is not None
    assert {r.task_id: r.source_score for r in view.results if r.setting == "inventing"} == (
        scores("inventing")
    )
    assert list(view.summaries) == list(rows.values())


def test_eval_json_and_table_show_the_source_scores(
    server: ScriptedServer, isolated_home: Path, tmp_path: Path
) -> None:
    tasks_file = numeric_tasks_file(tmp_path / "mine")
    spec = TaskSpec(kinds=("needle", str(tasks_file)), lengths=(300,), seed=3, count=1)
    server.respond_with(responder(generate(spec)))
    out = tmp_path / "results"
    flags = ["--task", "needle", "--task", str(tasks_file), "--length", "300", "--seed", "3",
             "--count", "1", "--setting", "honest:model=openai/good-model,mode=rlm,depth=1",
             "--setting", "plain:model=openai/bad-model,mode=direct", "--api-base",
             server.base_url, *PRICES, "--max-cost", "5", "--out", str(out)]  # fmt: skip
    done = run_cli("eval", *flags, "--json", home=isolated_home, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    rows = {row["name"]: row for row in summary["settings"]}
    assert set(rows["honest"]) >= SOURCE_KEYS | OLD_KEYS
    assert {k: rows["honest"][k] for k in SOURCE_KEYS} == {
        "source_gold_share": 1.0, "source_gold_runs": 1, "not_found_share": 0.0,
        "sources_checked": 1, "sources_not_found": 0,
    }  # fmt: skip
    # A direct answer gives no sources: it cites nothing (0), and has no quote to find (null).
    assert {k: rows["plain"][k] for k in SOURCE_KEYS} == {
        "source_gold_share": 0.0, "source_gold_runs": 1, "not_found_share": None,
        "sources_checked": 0, "sources_not_found": 0,
    }  # fmt: skip
    with (out / "runs.csv").open(encoding="utf-8") as file:
        runs = {
            (row["setting"], row["task_id"]): row["source_score"] for row in csv.DictReader(file)
        }
    assert runs == {
        (setting, task): ("1.0" if setting == "honest" else "0.0") if task.startswith("needle")
        else "" for setting in ("honest", "plain") for task in
        ("needle-300-s3-0", "apples-0", "apples-1")
    }  # fmt: skip
    assert "source_gold_share" in (out / "summary.csv").read_text().splitlines()[0]

    again = run_cli("eval", "--resume", summary["evaluation_id"], home=isolated_home, timeout=120)
    assert again.returncode == 0, again.stderr
    header, _rule, honest, plain, *rest = again.stdout.splitlines()
    assert header.split()[-4:] == ["cites", "gold", "not", "found"]
    assert honest.split()[-4:] == ["1.00", "(n=1)", "0.00", "(0/1)"]
    assert plain.split()[-3:] == ["0.00", "(n=1)", "–"]
    assert any(line.startswith("cites gold:") for line in rest)


def found(index: int, start: int, end: int) -> CheckedSource:
    return CheckedSource(1, "q", "sources", "exact", 100.0, "doc", index, start, end)


def test_a_source_cites_gold_it_overlaps_without_reaching_far_beyond_it() -> None:
    gold = [GoldSpan(0, 1_000, 1_060), GoldSpan(0, 5_000, 5_080), GoldSpan(1, 0, 50)]
    assert cited_gold([found(0, 1_040, 1_047)], gold) == {0}  # a few words inside
    assert cited_gold([found(0, 912, 1_148)], gold) == {0}  # with the lines either side
    assert cited_gold([found(0, 0, 1_060 + MAX_OUTSIDE_CHARS)], gold) == set()  # a whole page
    assert cited_gold([found(0, 0, 10_000)], gold) == set()  # the whole document
    assert cited_gold([found(0, 1_060, 1_100)], gold) == set()  # right after it
    assert cited_gold([found(1, 1_000, 1_060)], gold) == set()  # the same place, another file
    missing = CheckedSource(2, "q", "sources", "not_found", note="made up")
    assert cited_gold([missing, found(1, 10, 20)], gold) == {2}


def test_a_database_from_before_source_scores_gains_the_columns(isolated_home: Path) -> None:
    store = Store(paths.database_path())
    try:
        old = {name: str for name in ("evaluation_id", "setting", "task_id", "kind", "session_id",
               "status", "answer", "gold", "error", "finished_at")}  # fmt: skip
        numbers = ("length", "score", "cost_usd", "input_tokens", "output_tokens", "wall_s",
                   "sub_calls", "unpriced")  # fmt: skip
        with store.transaction():
            store.db.table(RESULTS).create(
                {**old, **dict.fromkeys(numbers, float)}, pk=("evaluation_id", "setting", "task_id")
            )
            store.db.table(RESULTS).insert(
                {**{name: "x" for name in old}, **dict.fromkeys(numbers, 0), "answer": "42"}
            )
        records = EvaluationRecords(store)
        [result] = records.results("x")
        assert {"gold_spans", "source_score"} <= set(store.db.table(RESULTS).columns_dict)
    finally:
        store.close()
    assert (result.gold_spans, result.sources_checked, result.source_score) == (0, 0, None)


def test_no_gold_or_no_answer_is_not_applicable_never_zero() -> None:
    base = TrialResult(
        evaluation_id="e", setting="s", task_id="t", kind="user", length=1, session_id="x",
        status="completed", score=1.0, cost_usd=0.0, input_tokens=1, output_tokens=1, wall_s=1.0,
        sub_calls=0, unpriced=False, answer="42", gold="42", sources_checked=2,
    )  # fmt: skip
    assert base.source_score is None
    failed = TrialResult(**{**base.__dict__, "answer": "", "gold_spans": 1})
    assert failed.source_score is None
    [row] = summarize_all(["s"], [base, failed])
    assert (row.source_gold_runs, row.to_json()["source_gold_share"]) == (0, None)
    assert Task("t", "user", (), "q", "a", "exact", 1).gold_spans == ()
    assert MADE_UP not in json.dumps([t.documents for t in generate(SPEC)])
