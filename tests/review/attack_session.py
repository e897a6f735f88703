"""A session shaped by model code aimed at the disk and at the health check, recorded through
the real store from events shaped as the engine emits them (no engine, no server).

A root RLM call's one turn fans out `llm_query` sub-calls, each answered: pure slices of the
corpus (`slices` of `slice_chars`, in order, so together they cover its start), prompts that
quote a chunk after an instruction (`quoted`, `quoted_chars` each), one text found in no
document sent again and again (`repeats` of `repeat_chars`), and texts of their own found in
no document (`distinct` of `distinct_chars`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from rlm_desktop.engine import events as ev
from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.context import ContextDocument
from rlm_desktop.store import Store
from tests.synthetic_events import (
    FakeRun,
    answered,
    call_started,
    llm_call,
    run_finished,
    run_started,
    turn_closed,
)

ROOT = "root"
QUERY = "What do the records say?"


@dataclass(frozen=True)
class Shape:
    """How many sub-calls of each kind, and how long their prompts are."""

    slices: int = 0
    slice_chars: int = 0
    quoted: int = 0
    quoted_chars: int = 0
    repeats: int = 0
    repeat_chars: int = 0
    distinct: int = 0
    distinct_chars: int = 0

    @property
    def calls(self) -> int:
        """Sub-calls in all."""
        return self.slices + self.quoted + self.repeats + self.distinct


def corpus(chars: int, seed: int = 12) -> str:
    """About `chars` characters of text whose lines differ (numbered lines of random words)."""
    rng = random.Random(seed)
    words = [
        "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9)))
        for _ in range(20_000)
    ]
    picked = rng.choices(words, k=chars // 6)
    lines = (
        f"{n:08d} {' '.join(picked[n * 12 : n * 12 + 12])}.\n" for n in range(len(picked) // 12)
    )
    return "".join(lines)[:chars]


def junk(chars: int, seed: int) -> str:
    """`chars` characters of letters and spaces that quote no document."""
    return "".join(random.Random(seed).choices("abcdefghij ", k=chars))


def prompts(corpus: str, shape: Shape) -> Iterator[str]:
    """The sub-calls' prompts, in the order they are sent."""
    for n in range(shape.slices):
        yield corpus[n * shape.slice_chars : (n + 1) * shape.slice_chars]
    size = shape.quoted_chars
    for n in range(shape.quoted):
        yield f"Summarize these records:\n{corpus[n * size : (n + 1) * size]}"
    again = junk(shape.repeat_chars, seed=0)
    for _ in range(shape.repeats):
        yield again
    for n in range(shape.distinct):
        yield junk(shape.distinct_chars, seed=n + 1)


def events(run_id: str, corpus: str, shape: Shape) -> Iterator[ev.Event]:
    """The run's events, timestamped as a batched fan-out would be."""
    now = 1_700_000_000.0
    yield run_started(
        run_id, now, query=QUERY, mode="rlm", settings={"budget": {"max_depth": 1}},
        documents=[{"name": "corpus.txt", "path": "", "chars": len(corpus), "tokens": None}],
    )  # fmt: skip
    yield call_started(run_id, ROOT, None, kind="rlm", prompt=QUERY, ts=now)
    yield ev.TurnStarted(run_id=run_id, ts=now, call_id=ROOT, index=0)
    for n, prompt in enumerate(prompts(corpus, shape)):
        yield from llm_call(
            run_id, f"s{n}", ROOT, 2, now + n * 0.001, prompt=prompt, response=f"Part {n}.",
            request_id=f"r{n}", reserved_tokens=2_600, input_tokens=2_500, output_tokens=4,
            cost_usd=0.0, latency_s=5.0,
        )  # fmt: skip
    now += 10.0
    yield from turn_closed(
        run_id, ROOT, 0, now, code="...", stdout="done", reply="```repl\n...\n```",
        observation="[cell 1] ran in 6.00 s\ndone", cell_s=6.0, turn_s=6.0,
    )  # fmt: skip
    yield from answered(
        run_id, ROOT, now, "Records.", input_tokens=5_000, output_tokens=200, cost_usd=0.0
    )
    yield run_finished(
        run_id, now, answer="Records.", cost_usd=0.0, input_tokens=5_000, output_tokens=200,
        turns=1, sub_calls=shape.calls, max_depth_reached=2, wall_s=10.0,
    )  # fmt: skip


def record(store: Store, run_id: str, corpus: str, shape: Shape) -> None:
    """Record the session in `store`, the corpus as its one document."""
    run = FakeRun(run_id, EventBus())
    recorder = store.record(run, documents=[ContextDocument(name="corpus.txt", text=corpus)])
    for event in events(run_id, corpus, shape):
        run.bus.publish(event)
    recorder.close()
