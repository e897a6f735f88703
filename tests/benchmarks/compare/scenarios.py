"""The scenarios `make bench-compare` runs through both implementations, and the one scripted
model that serves them both.

Both send an RLM turn with a system prompt and a plain sub-call (`llm_query`) as one user message,
and both count a turn by the assistant replies already in the history. The root call is told apart
from a child by the question: ours sends it as `Question: ...`, the reference as `Answer the
following: ...`; a child of either never carries it. Replies finish with `answer["ready"] = True`,
which both take as the final answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

QUESTION = "How many widgets are listed in the inventory?"
DOCUMENT = "".join(f"line {i}: widget {i % 7}\n" for i in range(400))
LATENCY_S = 0.25
PRICE_PER_MILLION = 100.0
"""The priced scenario's price per million tokens, input and output alike."""


def repl(code: str) -> str:
    return f"Running code.\n```repl\n{code}\n```"


def final(text: str) -> str:
    return repl(f'answer["content"] = {text!r}\nanswer["ready"] = True')


@dataclass(frozen=True)
class Scenario:
    """What the scripted root model does, the caps both sides get, and the ideal wall time."""

    name: str
    title: str
    root: list[str]
    child: list[str] = field(default_factory=lambda: [final("child done")])
    ideal_latencies: float | None = None
    """Round trips a perfectly concurrent run needs (None: time is not what this measures)."""
    repeats: int = 3
    max_turns: int = 10
    max_cost_usd: float | None = None
    max_depth: int = 2
    cell_timeout_s: float = 60.0
    reference_kill_s: float = 120.0


def fan_out(n: int) -> list[str]:
    return [
        repl(
            f"parts = llm_query_batched([f'count item {{i}}' for i in range({n})])\nprint(len(parts))"
        ),
        final(f"{n} parts read"),
    ]


SCENARIOS = [
    Scenario("fanout32", "fan-out of 32 llm_query", fan_out(32), ideal_latencies=3),
    Scenario("fanout256", "fan-out of 256 llm_query", fan_out(256), ideal_latencies=3),
    Scenario(
        "children8",
        "8 recursive children (rlm_query_batched, depth 2)",
        [
            repl("found = rlm_query_batched([f'child task {i}' for i in range(8)])\nprint(found)"),
            final("8 children answered"),
        ],
        ideal_latencies=3,
    ),
    Scenario(
        "turncap",
        "turn cap of 5 (the model never answers)",
        [repl("print('still looking')")] * 40,
        max_turns=5,
        repeats=1,
    ),
    Scenario(
        "dollarcap",
        "dollar cap of $0.02 on a 32-way fan-out ($100 per M tokens)",
        fan_out(32),
        max_cost_usd=0.02,
        repeats=1,
    ),
    Scenario(
        "endless",
        "an endless cell (while True: pass), 10 s cell limit",
        [repl("while True:\n    pass"), final("recovered")],
        cell_timeout_s=10.0,
        reference_kill_s=60.0,
        repeats=1,
    ),
]
BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}


def _texts(request: dict[str, Any]) -> list[str]:
    return [str(m.get("content") or "") for m in request.get("messages", [])]


def responder(scenario: Scenario) -> Callable[[dict[str, Any]], str]:
    """The scripted model for `scenario`, for either implementation's requests."""

    def respond(request: dict[str, Any]) -> str:
        messages = request.get("messages", [])
        if not any(m.get("role") == "system" for m in messages):
            return "7"  # a sub-call
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        is_root = any(QUESTION in text for text in _texts(request))
        script = scenario.root if is_root else scenario.child
        if turn >= len(script):
            return "I cannot answer more than that."  # the turn-cap fallback asks once more
        return script[turn]

    return respond
