"""Health benchmark: findings and coverage of a 10,000-call session over a 100 MB corpus.

Run with `make bench` (or `pytest tests/benchmarks/test_health_bench.py -m bench -s`). The
session is recorded through the real store from events shaped as the engine emits them: a root
RLM call whose 10 turns each send 1,000 `llm_query` prompts quoting 10 kB chunks of the corpus
(in one batch), and print 20,000 characters, half of them a quote of the corpus.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlm_desktop.engine import events as ev
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.review.health import analyse, session_health
from rlm_desktop.review.health.coverage import CoverageIndex
from rlm_desktop.store import Store
from rlm_desktop.store.detail import load_detail
from tests.benchmarks.report import record_figure
from tests.review.attack_session import Shape, corpus, prompts, record
from tests.store.synthetic import FakeRun

RUN = "health-bench"
CORPUS_CHARS = 100_000_000
CALLS = 10_000
TURNS = 10
CHUNK = CORPUS_CHARS // CALLS


def session_events(text: str) -> Iterator[ev.Event]:
    """The events of the run, timestamped as a batched fan-out would be."""
    now = 1_700_000_000.0
    yield ev.RunStarted(
        run_id=RUN, ts=now, query="What do the records say?", mode="rlm", model="openai/test-model",
        sub_model="openai/test-model", profile="default", settings={"budget": {"max_depth": 1}},
        documents=[{"name": "corpus.txt", "path": "", "chars": len(text), "tokens": None}],
    )  # fmt: skip
    yield ev.CallStarted(
        run_id=RUN, ts=now, call_id="root", parent_id=None, kind="rlm", depth=1,
        model="openai/test-model", prompt="What do the records say?",
    )  # fmt: skip
    per_turn = CALLS // TURNS
    for turn in range(TURNS):
        now += 10.0
        yield ev.TurnStarted(run_id=RUN, ts=now, call_id="root", index=turn)
        for k in range(per_turn):
            n = turn * per_turn + k
            yield ev.CallStarted(
                run_id=RUN, ts=now + k * 0.001, call_id=f"s{n}", parent_id="root", kind="llm",
                depth=2, model="openai/test-model",
                prompt=f"Summarize these records:\n{text[n * CHUNK : (n + 1) * CHUNK]}",
            )  # fmt: skip
        for k in range(per_turn):
            n = turn * per_turn + k
            reply = f"Chunk {n} lists {n % 97} records of note."
            # A call whose model replied: coverage counts what a model read.
            yield ev.LLMRequestSent(
                run_id=RUN, ts=now + k * 0.001, call_id=f"s{n}", request_id=f"r{n}",
                model="openai/test-model", messages=1, reserved_tokens=2_600,
            )  # fmt: skip
            yield ev.LLMResponded(
                run_id=RUN, ts=now + 5 + k * 0.001, call_id=f"s{n}", request_id=f"r{n}",
                model="openai/test-model", content=reply, input_tokens=2_500, output_tokens=12,
                cost_usd=None, latency_s=5.0, finish_reason="stop", truncated=False, attempts=1,
            )  # fmt: skip
            yield ev.CallFinished(
                run_id=RUN, ts=now + 5 + k * 0.001, call_id=f"s{n}", status="ok",
                response=reply, input_tokens=2_500,
                output_tokens=12, cost_usd=None,
            )  # fmt: skip
        output = f"computed {turn}: " + "x1 " * 3_300 + text[turn * 7_000_000 :][:10_000]
        yield ev.CellExecuted(
            run_id=RUN, ts=now + 6, call_id="root", turn=turn, index=0, code="...", stdout=output,
            stderr="", error=None, duration_s=6.0,
        )  # fmt: skip
        yield ev.TurnExecuted(
            run_id=RUN, ts=now + 6, call_id="root", index=turn, reply="```repl\n...\n```",
            code_blocks=1, observation=f"[cell {turn + 1}] ran in 6.00 s\n{output}",
            duration_s=6.0,
        )  # fmt: skip
    yield ev.AnswerSubmitted(
        run_id=RUN, ts=now + 7, call_id="root", answer="Records.", source="FINAL"
    )
    yield ev.CallFinished(
        run_id=RUN, ts=now + 7, call_id="root", status="ok", response="Records.",
        input_tokens=50_000, output_tokens=2_000, cost_usd=None,
    )  # fmt: skip


@pytest.mark.bench
def test_health_of_a_10000_call_session_over_100_mb(tmp_path: Path) -> None:
    text = corpus(CORPUS_CHARS)
    store = Store(tmp_path / "bench.db")
    run = FakeRun(RUN, EventBus())
    recorder = store.record(run, documents=[ContextDocument(name="corpus.txt", text=text)])
    for event in session_events(text):
        run.bus.publish(event)
    recorder.close()

    started = time.perf_counter()
    report = session_health(store, RUN)
    whole = time.perf_counter() - started

    started = time.perf_counter()
    detail = load_detail(store, RUN)
    documents = store.document_texts(RUN)
    loading = time.perf_counter() - started
    started = time.perf_counter()
    index = CoverageIndex(documents)
    indexing = time.perf_counter() - started
    started = time.perf_counter()
    analyse(detail, [])
    findings = time.perf_counter() - started
    unquoted = "".join(f"line {n} of text that quotes no document\n" for n in range(250_000))
    started = time.perf_counter()
    index.add(unquoted)
    scanning = time.perf_counter() - started
    store.close()

    covered = report.coverage.documents[0]
    assert covered.chars == len(text)
    assert report.coverage.share == 1.0
    assert len(index.coverage().documents) == 1
    calls = len(detail.calls)
    record_figure(
        "health",
        f"whole check, {calls:,} calls, {len(text) / 1e6:.0f} MB",
        f"{whole:.2f} s",
        "target < 10 s",
    )
    record_figure("health", "reading the session and its texts", f"{loading:.2f} s")
    record_figure(
        "health",
        "indexing the corpus",
        f"{indexing:.2f} s",
        f"the index holds {index.nbytes / 1e6:.0f} MB ({index.nbytes / len(text):.2f} bytes a character)",
    )
    record_figure("health", "findings alone (no documents)", f"{findings:.2f} s")
    record_figure(
        "health",
        "scanning text that quotes no document",
        f"{len(unquoted) / scanning / 1e6:.1f} MB/s",
        "the slow case: every position is probed",
    )


ATTACK = Shape(
    slices=4_000, slice_chars=25_000, quoted=5_700, quoted_chars=10_000, repeats=200,
    repeat_chars=1_000_000, distinct=100, distinct_chars=300_000,
)  # fmt: skip
"""10,000 sub-calls over the 100 MB corpus as model code aimed at the disk would send them: the
corpus in 25 kB slices, 10 kB chunks after an instruction, 200 MB of one text that quotes
nothing, and 30 MB of texts of their own."""


@pytest.mark.bench
def test_health_of_a_10000_call_session_model_code_aimed_at(tmp_path: Path) -> None:
    text = corpus(CORPUS_CHARS)
    sent = sum(len(prompt) for prompt in prompts(text, ATTACK))
    store = Store(tmp_path / "attack.db")
    started = time.perf_counter()
    record(store, RUN, text, ATTACK)
    recording = time.perf_counter() - started

    started = time.perf_counter()
    report = session_health(store, RUN)
    whole = time.perf_counter() - started
    store.close()
    stored = sum(path.stat().st_size for path in tmp_path.glob("attack.db*"))

    assert report.coverage.share == 1.0
    assert report.coverage.unscanned > 0
    record_figure(
        "health",
        f"whole check, {ATTACK.calls:,} calls sending {sent / 1e6:,.0f} MB (attack)",
        f"{whole:.2f} s",
        "target < 10 s",
    )
    record_figure(
        "health",
        "  of which not scanned (past the probe limit)",
        f"{report.coverage.unscanned / 1e6:.1f} MB",
    )
    record_figure(
        "store",
        f"sessions.db after {sent / 1e6:,.0f} MB of prompts on a {len(text) / 1e6:.0f} MB corpus",
        f"{stored / 1e6:,.0f} MB",
        f"recorded in {recording:.1f} s",
    )
