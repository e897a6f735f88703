"""The plain-Python call tree folds engine events into nodes, totals and turns."""

from __future__ import annotations

import pytest

from rlm_desktop.engine import events as ev
from rlm_desktop.review.call_tree import CallTree
from tests.synthetic_events import call_finished, call_started, failed_call
from tests.ui.synthetic import llm_call, rlm_call_end, rlm_call_start, synthetic_run


def test_nests_calls_by_parent_and_counts_subtree_totals() -> None:
    tree = CallTree()
    changes = tree.apply(synthetic_run(fanout=3))
    root = tree.root
    assert root is not None
    assert [n.kind for n in root.children] == ["llm", "llm", "llm", "rlm"]
    child = root.children[3]
    assert child.children[0].level == 2
    assert child.children[0].parent is child
    assert [n.row for n in root.children] == [0, 1, 2, 3]
    assert len(changes.added) == len(tree) == 6
    assert root.subtree.calls == 6
    assert root.subtree.running == 0
    # own usage of root (1000/50) + child rlm (1000/50) + 4 llm calls (100/10 each)
    assert root.subtree.input_tokens == 2000 + 4 * 100
    assert root.subtree.output_tokens == 100 + 4 * 10
    assert root.subtree.cost_usd == pytest.approx(0.02 + 4 * 0.001)
    assert child.subtree.calls == 2
    assert tree.run.finished is not None
    assert tree.sub_calls_done == 5
    assert tree.sub_calls_running == 0


def test_turns_collect_reply_cells_and_observation() -> None:
    tree = CallTree()
    tree.apply(synthetic_run(fanout=1))
    root = tree.root
    assert root is not None
    turn = root.turns[0]
    assert turn.reply == "Let me look."
    assert turn.cells[0].code.startswith("parts = context")
    assert turn.cells[0].stdout == "3\n"
    assert turn.observation == "3\n"
    assert root.answer == "The answer is 42."
    assert root.status == "ok"


def test_live_reply_shows_before_the_turn_is_executed() -> None:
    tree = CallTree()
    call_id, opening = rlm_call_start("r", None, 0, 10.0)
    changes = tree.apply(opening)
    node = tree.nodes[call_id]
    assert node in changes.turns
    assert "```repl" in node.turns[0].reply
    assert not node.turns[0].finished
    assert node.running
    assert node.preview() == "What is this about?"
    assert node.turns[0].summary() == "its code running"  # not "0 cells" while it runs


def test_incremental_changes_name_only_touched_nodes_and_ancestors() -> None:
    tree = CallTree()
    root_id, opening = rlm_call_start("r", None, 0, 10.0)
    tree.apply(opening)
    child_id, child_open = rlm_call_start("r", root_id, 1, 11.0)
    tree.apply(child_open)
    sub = llm_call("r", child_id, 2, 12.0, 1)
    added = tree.apply(sub[:1])
    assert [n.level for n in added.added] == [2]
    finished = tree.apply(sub[1:])
    assert finished.added == []
    leaf = tree.nodes[sub[0].call_id]  # type: ignore[attr-defined]
    assert finished.updated == {leaf, tree.nodes[child_id], tree.nodes[root_id]}
    assert tree.nodes[root_id].subtree.running == 2


def test_failed_call_counts_as_error_and_previews_the_error() -> None:
    tree = CallTree()
    root_id, opening = rlm_call_start("r", None, 0, 10.0)
    tree.apply(opening)
    tree.apply(
        rlm_call_end("r", root_id, 11.0, "", stderr="oops", error="Traceback ...\nValueError")
    )
    tree.apply(failed_call("r", "bad", root_id, "RateLimitError: slow down"))
    bad = tree.nodes["bad"]
    assert bad.failed
    assert bad.preview() == "RateLimitError: slow down"
    assert tree.nodes[root_id].subtree.errors == 1
    assert tree.nodes[root_id].turns[0].cells[0].stderr == "oops"


def test_unknown_call_ids_and_duplicates_are_ignored() -> None:
    tree = CallTree()
    changes = tree.apply(
        [
            ev.TurnStarted(run_id="r", call_id="ghost", index=0),
            call_finished("r", "ghost", input_tokens=1, output_tokens=1, cost_usd=0.0),
        ]
    )
    assert len(tree) == 0
    assert not changes.added
    start = call_started("r", "a", None, depth=0, model="m")
    tree.apply([start, start])
    assert len(tree.roots) == 1


def test_unpriced_calls_are_counted() -> None:
    tree = CallTree()
    tree.apply(
        [
            call_started("r", "a", None, depth=0, model="m"),
            ev.LLMResponded(
                run_id="r",
                call_id="a",
                request_id="q",
                model="m",
                content="x",
                input_tokens=5,
                output_tokens=2,
                cost_usd=None,
                latency_s=0.1,
                finish_reason="stop",
                truncated=False,
                attempts=1,
            ),
        ]
    )
    node = tree.nodes["a"]
    assert node.unpriced
    assert node.subtree.unpriced == 1
    assert node.subtree.tokens == 7


def _cell(call_id: str, turn: int, index: int, error: str | None = None) -> ev.CellExecuted:
    return ev.CellExecuted(
        run_id="r",
        call_id=call_id,
        turn=turn,
        index=index,
        code=f"step({turn}, {index})",
        stdout="",
        stderr="",
        error=error,
        duration_s=0.01,
    )


def test_cells_are_numbered_across_the_call_as_the_worker_names_them() -> None:
    tree = CallTree()
    root_id, opening = rlm_call_start("r", None, 1, 10.0)
    tree.apply(opening)
    tree.apply([_cell(root_id, 0, 0), ev.TurnStarted(run_id="r", call_id=root_id, index=1)])
    tree.apply([_cell(root_id, 1, 0), _cell(root_id, 1, 1, 'File "<cell 3>"\nNameError: x')])
    root = tree.nodes[root_id]
    assert [turn.cell_numbers for turn in root.turns] == [[1], [2, 3]]
    assert root.cell_errors == 1
    assert root.turns[1].cell_errors == 1
    assert root.needs_attention
    assert not root.failed


def test_a_call_that_ends_mid_turn_closes_the_turn_and_says_why() -> None:
    tree = CallTree()
    stopped_id, opening = rlm_call_start("r", None, 1, 10.0)
    tree.apply(opening)
    failed_id, child_opening = rlm_call_start("r", stopped_id, 2, 11.0)
    tree.apply(child_opening[:2])
    tree.apply([call_finished("r", failed_id, status="error", error="LLMError: HTTP 500")])
    tree.apply([call_finished("r", stopped_id, status="cancelled", error="cancelled")])
    stopped, failed = tree.nodes[stopped_id].turns[0], tree.nodes[failed_id].turns[0]
    assert stopped.closed == "cancelled"
    assert stopped.progress("cancelled") == "Stopped while its code ran: cancelled"
    assert failed.closed == "error"
    assert failed.progress("LLMError: HTTP 500") == (
        "Failed before the model replied: LLMError: HTTP 500"
    )
    root = tree.nodes[stopped_id]
    assert (root.subtree.errors, root.subtree.stopped) == (1, 1)
    assert root.subtree.summary().endswith("1 failed · 1 stopped")


def test_run_finished_closes_the_calls_it_left_running() -> None:
    tree = CallTree()
    events = list(synthetic_run(fanout=2, finish=False))
    tree.apply(events)
    root = tree.root
    assert root is not None
    assert root.running
    changes = tree.apply(
        [
            ev.RunFinished(
                run_id="run-1",
                status="cancelled",
                answer="",
                cost_usd=0.0,
                input_tokens=0,
                output_tokens=0,
                turns=1,
                sub_calls=3,
                max_depth_reached=2,
                wall_s=1.0,
                unpriced=False,
            )
        ]
    )
    assert root.status == "cancelled"
    assert root.subtree.running == 0
    assert root.turns[0].closed == "cancelled"
    assert root in changes.turns
    assert tree.sub_calls_running == 0


@pytest.mark.parametrize(("price", "cost"), [(None, "unpriced"), (0.002, "$0")])
def test_calls_without_a_reply_read_their_cost_like_their_siblings(
    price: float | None, cost: str
) -> None:
    tree = CallTree()
    tree.apply([call_started("r", "root", None, kind="rlm", depth=1, model="m")])
    tree.apply(
        [
            ev.LLMResponded(
                run_id="r",
                call_id="root",
                request_id="q",
                model="m",
                content="```repl\nllm_query_batched(parts)\n```",
                input_tokens=50,
                output_tokens=5,
                cost_usd=price,
                latency_s=0.1,
                finish_reason="stop",
                truncated=False,
                attempts=1,
            ),
            call_started("r", "cut", "root", model="m"),
            ev.LLMRequestSent(
                run_id="r", call_id="cut", request_id="q2", model="m", messages=1, reserved_tokens=9
            ),
            call_finished("r", "cut", status="cancelled", error="cancelled", cost_usd=0.0),
        ]
    )
    assert tree.nodes["cut"].cost_text == cost
    assert tree.nodes["root"].subtree.cost_text == tree.nodes["root"].cost_text


def test_a_turn_waiting_on_a_retried_request_says_why_it_waits() -> None:
    tree = CallTree()
    tree.apply(
        [
            call_started("r", "c1", None, kind="rlm", prompt="q"),
            ev.TurnStarted(run_id="r", call_id="c1", index=0),
            ev.LLMRetried(
                run_id="r", call_id="c1", request_id="q1", attempt=2, delay_s=1.0,
                reason="HTTP 500: the server is overloaded",
            ),
        ]
    )  # fmt: skip
    turn = tree.nodes["c1"].turns[0]
    assert turn.progress() == (
        "waiting for the model… (attempt 2 failed: HTTP 500: the server is overloaded;"
        " trying again in 1.00 s)"
    )
