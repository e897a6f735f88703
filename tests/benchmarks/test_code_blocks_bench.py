"""A strong coder's replies of several code blocks, under the old rule (one block a turn) and the
new one (every block runs; cut once what follows is no further code): turns, input and output
tokens, wall time.

The scripted coder writes its whole plan in every reply, from the first block that has not run
yet (what it sees in its history, as a model re-issues what was cut), streamed at about 100
tokens a second after 0.3 s to its first token. The server reports no usage, so every reply,
cut or whole, is counted the same way: by the app's own tokenizer.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Budget
from rlm_desktop.engine.code_stop import AFTER_CODE, FIRST_BLOCK
from rlm_desktop.engine.events import CellExecuted
from rlm_desktop.engine.parsing import extract_code_blocks
from rlm_desktop.engine.profiles import ProfileDraft, save_user_profile
from tests.benchmarks.report import record_figure
from tests.engine.scripting import make_run, of_type, run_to_end
from tests.scripted_server import Reply, ScriptedServer

pytestmark = pytest.mark.bench

LINES = "lines = context.splitlines()\nprint(len(lines))"
TOTAL = "total = sum(int(line.rsplit(' ', 1)[1]) for line in lines)\nprint(total)"
PROSE = (
    "That gives the number of lines. Each line ends with its amount, so the next step adds the "
    "last field of every line; I print the total to check it before answering with it.\n"
)
IMAGINED = "Output:\n" + "".join(f"{n}\n" for n in range(300, 1500, 37))


@dataclass(frozen=True)
class Scenario:
    """A reply's blocks, and how the coder writes what comes after each one."""

    name: str
    codes: tuple[str, ...]
    after: str = "then\n"


SCENARIOS = (
    Scenario("two blocks", ("n = len(context)\nprint(n)", "FINAL(n)")),
    Scenario("three blocks", (LINES, TOTAL, "FINAL(total)")),
    Scenario("prose between blocks", (LINES, TOTAL, "FINAL(total)"), PROSE),
    Scenario("a block, then an imagined output", (LINES, TOTAL, "FINAL(total)"), IMAGINED),
)


def coder(scenario: Scenario) -> Callable[[dict[str, Any]], Reply]:
    """The scripted strong coder: the blocks not yet run, each followed by `scenario.after`."""

    def respond(request: dict[str, Any]) -> Reply:
        history = [m["content"] for m in request["messages"] if m["role"] == "assistant"]
        ran = sum(len(extract_code_blocks(reply)) for reply in history)
        blocks = [f"```repl\n{code}\n```\n{scenario.after}" for code in scenario.codes[ran:]]
        content = "Let me look at the ledger.\n" + "".join(blocks)
        return Reply(
            content=content, delay_s=0.3, chunk_chars=4, chunk_delay_s=0.01, usage_in_stream=False
        )

    return respond


@dataclass(frozen=True)
class Measured:
    """One run's figures."""

    turns: int
    input_tokens: int
    output_tokens: int
    wall_s: float


REPEATS = 3
"""Runs of each scenario under each rule; the wall time is their median (the first run of the
session, which starts the sandbox's first worker, is a warm-up and not counted)."""


async def measure(server: ScriptedServer, scenario: Scenario, rule: str) -> Measured:
    """The scenario under `rule`: its figures, the wall time the median of `REPEATS` runs."""
    runs = [await _once(server, scenario, rule) for _ in range(REPEATS)]
    assert len({(r.turns, r.input_tokens, r.output_tokens) for r in runs}) == 1
    return Measured(
        runs[0].turns, runs[0].input_tokens, runs[0].output_tokens,
        statistics.median(r.wall_s for r in runs),
    )  # fmt: skip


async def _once(server: ScriptedServer, scenario: Scenario, rule: str) -> Measured:
    profile = f"strong-{rule}"
    save_user_profile(
        paths.user_profiles_dir(),
        ProfileDraft(
            name=profile,
            prompt=(paths.profile_folders().bundled / "default.txt").read_text(encoding="utf-8"),
            code_stop=rule,
        ),
    )
    server.respond_with(coder(scenario))
    started = time.perf_counter()
    run = make_run(server, profile=profile, budget=Budget(max_turns=6))
    result, events = await run_to_end(run)
    wall = time.perf_counter() - started
    assert result.status == "completed", result.error
    assert [c.code for c in of_type(events, CellExecuted)] == list(scenario.codes)
    return Measured(result.turns, result.input_tokens, result.output_tokens, wall)


async def test_several_blocks_a_reply_old_rule_and_new(scripted_server: ScriptedServer) -> None:
    """Reported, not asserted beyond the runs' answers and cells: the four figures each way."""
    await _once(scripted_server, SCENARIOS[0], AFTER_CODE)
    print("\nscenario | turns old/new | input tokens old/new | output tokens old/new | wall s")
    for scenario in SCENARIOS:
        old = await measure(scripted_server, scenario, FIRST_BLOCK)
        new = await measure(scripted_server, scenario, AFTER_CODE)
        row = (
            f"{old.turns} / {new.turns}",
            f"{old.input_tokens:,} / {new.input_tokens:,}",
            f"{old.output_tokens:,} / {new.output_tokens:,}",
            f"{old.wall_s:.1f} / {new.wall_s:.1f}",
        )
        print(f"{scenario.name} | " + " | ".join(row))
        record_figure(
            "code blocks",
            f"{scenario.name}: turns, input, output tokens, wall s (first-block / after-code)",
            "; ".join(row),
        )
