"""Each sub-call knows the parent's cell whose code made it, over sessions the real engine ran
and the store recorded: the tree's row tooltip and the call details name it."""

from __future__ import annotations

from rlm_desktop.review.call_tree import CallTree
from tests.engine.scripting import repl
from tests.review.recorded_runs import FANOUT, FINAL, Script, record, stored_events
from tests.scripted_server import Reply

LATER_CELL = Script(
    "Look first, then ask.",
    [repl('print("looking")'), repl('print(llm_query("part a"))'), FINAL],
    Reply(content="a summary"),
)


async def _tree(script: Script) -> CallTree:
    recorded = await record(script)
    tree = CallTree()
    tree.apply(stored_events(recorded.session_id))
    return tree


async def test_a_fan_out_names_the_one_cell_that_made_every_sub_call() -> None:
    tree = await _tree(FANOUT)
    root = tree.root
    assert root is not None
    assert root.spawned_by == ""
    assert [child.spawned_by for child in root.children] == ["cell 1, turn 1"] * 4


async def test_a_sub_call_of_a_later_turn_names_that_turns_cell() -> None:
    tree = await _tree(LATER_CELL)
    root = tree.root
    assert root is not None
    assert [child.spawned_by for child in root.children] == ["cell 2, turn 2"]
