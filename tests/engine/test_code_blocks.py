"""Every code block of a reply runs, in order, in one turn (as the reference `rlms` runs them),
and a root reply's stream is cut where what follows its blocks is no further code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rlm.core.types import CodeBlock, REPLResult, RLMIteration

from rlm_desktop.engine import Budget
from rlm_desktop.engine.code_stop import PROSE_BOUND
from rlm_desktop.engine.events import CellExecuted, LLMResponded, TurnExecuted
from rlm_desktop.exports import export
from rlm_desktop.review.call_tree import CallTree
from rlm_desktop.store import Store
from tests.engine.scripting import (
    QUERY,
    make_run,
    observation_after,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import Reply, ScriptedServer


def blocks(*codes: str, between: str = "then") -> str:
    """A reply holding one ```repl block per code, with `between` written between them."""
    return f"\n{between}\n".join(f"```repl\n{code}\n```" for code in codes)


def streamed(content: str) -> Reply:
    """`content` streamed in small pieces, as a model writes it."""
    return Reply(content=content, chunk_chars=8, chunk_delay_s=0.001)


STRONG = "default"
"""The strong coders' profile (a run on 127.0.0.1 would otherwise get `local`'s one block a
turn)."""


async def test_two_blocks_of_one_reply_both_run_and_the_second_answers(
    scripted_server: ScriptedServer,
) -> None:
    """The issue's own reply: `a = 1`, "then", `b = a + 1; FINAL(b)`, answered in one turn."""
    reply = blocks("a = 1", "b = a + 1\nFINAL(b)")
    scripted_server.respond_with(scripted({QUERY: [streamed(reply)]}))
    result, events = await run_to_end(make_run(scripted_server, profile=STRONG))

    assert (result.status, result.answer, result.turns) == ("completed", "2", 1)
    assert [c.code for c in of_type(events, CellExecuted)] == ["a = 1", "b = a + 1\nFINAL(b)"]
    (turn,) = of_type(events, TurnExecuted)
    assert (turn.code_blocks, turn.reply) == (2, reply)
    assert of_type(events, LLMResponded)[0].cut is None


async def test_a_block_that_raises_does_not_stop_the_blocks_after_it_as_in_the_reference(
    scripted_server: ScriptedServer,
) -> None:
    """The reference runs every block of a reply whatever the one before it did; the model is
    shown each block's output, the error among them."""
    reply = blocks("print('one')", "1 / 0", "print('three')")
    scripted_server.respond_with(scripted({QUERY: [streamed(reply), repl("FINAL('seen')")]}))
    result, events = await run_to_end(make_run(scripted_server, profile=STRONG))

    assert (result.status, result.answer, result.turns) == ("completed", "seen", 2)
    cells = of_type(events, CellExecuted)
    assert [(c.turn, c.index) for c in cells] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert "ZeroDivisionError" in (cells[1].error or "")
    shown = observation_after(scripted_server, 0)
    assert shown.index("one") < shown.index("ZeroDivisionError") < shown.index("three")
    tree = CallTree()
    tree.apply(events)
    assert tree.root is not None
    assert [len(turn.cells) for turn in tree.root.turns] == [3, 1]


async def test_a_reply_with_several_cells_exports_as_the_reference_reads_it(
    scripted_server: ScriptedServer, isolated_home: Path
) -> None:
    reply = blocks("a = 6", "print(a * 7)", "FINAL(a * 7)", between="Now the product:")
    scripted_server.respond_with(scripted({QUERY: [streamed(reply)]}))
    store = Store(isolated_home / "sessions.db")
    try:
        run = make_run(scripted_server, profile=STRONG)
        recorder = store.record(run, documents=[])
        await run.execute()
        recorder.close()
        _meta, *entries = map(json.loads, export(store, run.run_id, "jsonl").splitlines())
    finally:
        store.close()

    (entry,) = entries
    assert [b["code"] for b in entry["code_blocks"]] == ["a = 6", "print(a * 7)", "FINAL(a * 7)"]
    assert [b["result"]["stdout"] for b in entry["code_blocks"]][1] == "42\n"
    assert entry["final_answer"] == "42"
    cells = [CodeBlock(b["code"], REPLResult(**b["result"])) for b in entry["code_blocks"]]
    iteration = RLMIteration(entry["prompt"], entry["response"], cells, entry["final_answer"])
    assert len(iteration.to_dict()["code_blocks"]) == 3


IMAGINED_AFTER = {
    "an Output: line": "Output:\n42\n",
    "a fenced output block holding code": "```output\n```repl\nprint('IMAGINED RAN')\n```\n```\n",
    "a bare fence": "```\n42\n```\n",
    "a claimed result": "This prints 42, so next:\n",
    "an interpreter prompt": ">>> print(x)\n42\n",
}


@pytest.mark.parametrize("imagined", IMAGINED_AFTER.values(), ids=IMAGINED_AFTER.keys())
async def test_a_block_followed_by_an_imagined_output_is_cut_there(
    scripted_server: ScriptedServer, imagined: str
) -> None:
    tail = f"{imagined}\n```repl\nprint('IMAGINED RAN')\n```\n" * 50
    first = streamed("Let me look.\n```repl\nprint('real')\n```\n" + tail)
    scripted_server.respond_with(scripted({QUERY: [first, repl("FINAL('done')")]}))
    result, events = await run_to_end(make_run(scripted_server, profile=STRONG))

    assert (result.status, result.answer) == ("completed", "done")
    assert [c.code for c in of_type(events, CellExecuted)] == ["print('real')", "FINAL('done')"]
    responded = of_type(events, LLMResponded)[0]
    assert responded.cut == "code"
    assert responded.content == "Let me look.\n```repl\nprint('real')\n```"
    assert scripted_server.streamed_chars[0] < len(first.content) / 2


async def test_prose_past_the_bound_after_a_block_is_not_waited_for(
    scripted_server: ScriptedServer,
) -> None:
    rambling = "I expect the total to be large, because the ledger is long. " * 100
    first = streamed(blocks("print('real')", "print('never')", between=rambling))
    scripted_server.respond_with(scripted({QUERY: [first, repl("FINAL('done')")]}))
    result, events = await run_to_end(make_run(scripted_server, profile=STRONG))

    assert result.answer == "done"
    assert [c.code for c in of_type(events, CellExecuted)] == ["print('real')", "FINAL('done')"]
    responded = of_type(events, LLMResponded)[0]
    assert (responded.cut, responded.content) == ("code", "```repl\nprint('real')\n```")
    assert scripted_server.streamed_chars[0] < PROSE_BOUND * 3


async def test_a_block_that_submits_the_answer_is_the_replys_last(
    scripted_server: ScriptedServer,
) -> None:
    """The run ends after the cell that calls FINAL, so what the model writes after its block,
    a sentence or a block of its own, is not waited for."""
    after = "That answers the question: the ledger totals what the cell printed.\n" * 40
    first = streamed(blocks("x = 6 * 7\nFINAL(x)", "print('never')", between=after))
    scripted_server.respond_with(scripted({QUERY: [first]}))
    result, events = await run_to_end(make_run(scripted_server, profile=STRONG))

    assert (result.status, result.answer, result.turns) == ("completed", "42", 1)
    assert [c.code for c in of_type(events, CellExecuted)] == ["x = 6 * 7\nFINAL(x)"]
    responded = of_type(events, LLMResponded)[0]
    assert (responded.cut, responded.content) == ("code", "```repl\nx = 6 * 7\nFINAL(x)\n```")
    assert scripted_server.streamed_chars[0] < PROSE_BOUND


async def test_a_block_still_open_at_the_cap_does_not_run_and_the_closed_ones_do(
    scripted_server: ScriptedServer,
) -> None:
    endless = "```repl\nprint('first')\n```\nNext:\n```repl\nx = [\n" + "    1,\n" * 20_000
    scripted_server.respond_with(
        scripted({QUERY: [streamed(endless), repl("FINAL('after the cap')")]})
    )
    result, events = await run_to_end(make_run(scripted_server, profile=STRONG))

    assert (result.status, result.answer) == ("completed", "after the cap")
    assert [c.code for c in of_type(events, CellExecuted)] == [
        "print('first')",
        "FINAL('after the cap')",
    ]
    assert of_type(events, LLMResponded)[0].cut == "max_tokens"
    assert "your last reply was cut at the output-token limit" in observation_after(
        scripted_server, 0
    )


async def test_a_fence_inside_a_string_neither_closes_nor_opens_a_block(
    scripted_server: ScriptedServer,
) -> None:
    first_code = 'fence = "```"\nprint(fence + "repl")\nprint("```output")'
    reply = blocks(first_code, "print(len(fence))\nFINAL(fence)")
    scripted_server.respond_with(scripted({QUERY: [streamed(reply)]}))
    result, events = await run_to_end(make_run(scripted_server, profile=STRONG))

    assert (result.status, result.answer) == ("completed", "```")
    cells = of_type(events, CellExecuted)
    assert [c.code for c in cells] == [first_code, "print(len(fence))\nFINAL(fence)"]
    assert cells[0].stdout == "```repl\n```output\n"


async def test_five_hundred_blocks_of_one_reply_all_run_in_order(
    scripted_server: ScriptedServer,
) -> None:
    """Bounded work: the stop reads each line once (a scan from the start per piece would read
    this reply's 11,000 characters some 2,800 times)."""
    codes = ["t = 0", *(f"t += {i}" for i in range(500)), "FINAL(t)"]
    scripted_server.respond_with(
        scripted({QUERY: [Reply(content=blocks(*codes, between="and"), chunk_chars=4)]})
    )
    run = make_run(scripted_server, profile=STRONG, budget=Budget(timeout_s=300))
    result, events = await run_to_end(run)

    assert (result.status, result.answer, result.turns) == ("completed", str(sum(range(500))), 1)
    assert [c.code for c in of_type(events, CellExecuted)] == codes


async def test_a_final_in_prose_after_a_block_does_not_end_the_run(
    scripted_server: ScriptedServer,
) -> None:
    """Today's rule holds: a FINAL written as prose counts only in a reply without code."""
    first = streamed("```repl\nx = 41 + 1\n```\nFINAL(42)")
    scripted_server.respond_with(scripted({QUERY: [first, repl("FINAL(x)")]}))
    result, events = await run_to_end(make_run(scripted_server, profile=STRONG))

    assert (result.status, result.answer, result.turns) == ("completed", "42", 2)
    assert [c.code for c in of_type(events, CellExecuted)] == ["x = 41 + 1", "FINAL(x)"]


@pytest.mark.parametrize("profile", ["small", "gemma", None])
async def test_the_small_and_local_model_profiles_keep_one_block_a_turn(
    scripted_server: ScriptedServer, profile: str | None
) -> None:
    """None: a model on the user's own server (127.0.0.1) that no profile names gets `local`."""
    reply = blocks("a = 1", "print('second block')")
    scripted_server.respond_with(scripted({QUERY: [streamed(reply), repl("FINAL(a)")]}))
    result, events = await run_to_end(make_run(scripted_server, profile=profile))

    assert (result.status, result.answer, result.turns) == ("completed", "1", 2)
    assert [c.code for c in of_type(events, CellExecuted)] == ["a = 1", "FINAL(a)"]
    assert of_type(events, LLMResponded)[0].cut == "code"
