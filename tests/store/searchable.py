"""A small run in which each kind of text holds its own word, to test what search finds where.

`WORDS` maps each word to the field it is in and the place search should name.
"""

from __future__ import annotations

from collections.abc import Iterator

from rlm_desktop.engine.events import Event, TurnStarted
from tests.synthetic_events import (
    answered,
    call_finished,
    call_started,
    llm_call,
    restamp,
    run_finished,
    run_started,
    turn_closed,
)

QUESTION = "Which tank holds the axolotl?"
ANSWER = "The axolotl and a gecko share tank B."
WORDS = {
    "axolotl": ("query", "question"),
    "gecko": ("answer", "answer"),
    "dingo": ("prompt", "prompt · LLM call c1"),
    "echidna": ("response", "response · LLM call c1"),
    "tapir": ("error", "error · LLM call c2"),
    "numbat": ("code", "code · root call · turn 1 · cell 1"),
    "platypus": ("stdout", "output · root call · turn 1 · cell 1"),
    "wombat": ("stderr", "stderr · root call · turn 1 · cell 1"),
    "kiwi": ("error", "error · root call · turn 1 · cell 1"),
    "quokka": ("reply", "reply · root call · turn 1"),
    "bilby": ("stdout", "output · root call · turn 2 · cell 2"),
}
"""word -> (the field that holds it, where search says it was found)."""


def searchable_run(run_id: str, start: float = 1_700_000_000.0) -> Iterator[Event]:
    """The events of a finished run whose texts each hold one word of `WORDS`."""
    return restamp(_events(run_id), start)


def _events(run_id: str) -> Iterator[Event]:
    yield run_started(run_id, query=QUESTION, mode="rlm", settings={}, documents=[])
    yield call_started(run_id, "c0", None, kind="rlm", depth=0, prompt=QUESTION)
    yield TurnStarted(run_id=run_id, call_id="c0", index=0)
    yield from llm_call(
        run_id, "c1", "c0", 1, 0.0, prompt="Does the dingo live in tank B?",
        response="Yes, with an echidna.", request_id="q1", reserved_tokens=100,
        input_tokens=10, output_tokens=5, cost_usd=0.001, latency_s=0.1,
    )  # fmt: skip
    yield call_started(run_id, "c2", "c0", prompt="Is tank C empty?")
    yield call_finished(run_id, "c2", status="error", error="RateLimitError: tapir quota")
    yield from turn_closed(
        run_id, "c0", 0, 0.0, code="print(find('numbat'))", stdout="tank B: platypus\n",
        stderr="DeprecationWarning: wombat\n", error="KeyError: 'kiwi'",
        reply="I will look for a quokka.", observation="tank B", cell_s=0.1, turn_s=0.2,
    )  # fmt: skip
    yield TurnStarted(run_id=run_id, call_id="c0", index=1)
    yield from turn_closed(
        run_id, "c0", 1, 0.0, code="print(count())", stdout="one bilby\n", stderr="",
        error=None, reply="Counting.", observation="one", cell_s=0.1, turn_s=0.2,
    )  # fmt: skip
    yield from answered(run_id, "c0", 0.0, ANSWER, input_tokens=50, output_tokens=9, cost_usd=0.01)
    yield run_finished(
        run_id, answer=ANSWER, cost_usd=0.011, input_tokens=60, output_tokens=14, turns=1,
        sub_calls=2, max_depth_reached=1, wall_s=1.0,
    )  # fmt: skip
