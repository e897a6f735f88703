"""The tree's search finds a text anywhere in a call and shows each match with its ancestors."""

from __future__ import annotations

import pytest

from rlm_desktop.engine import events as ev
from rlm_desktop.review.call_tree import CallTree
from rlm_desktop.review.search import CallSearch
from tests.synthetic_events import failed_call
from tests.ui.synthetic import llm_call, rlm_call_end, rlm_call_start


def _tree() -> tuple[CallTree, str, str]:
    tree = CallTree()
    root_id, opening = rlm_call_start("r", None, 1, 1.0, prompt="When was the outage?")
    tree.apply(opening)
    child_id, child_opening = rlm_call_start("r", root_id, 2, 2.0, prompt="Dig into part 0")
    tree.apply(child_opening)
    tree.apply(llm_call("r", child_id, 3, 3.0, 7))
    tree.apply(
        rlm_call_end(
            "r",
            child_id,
            4.0,
            "child answer",
            stderr="DeprecationWarning: old API",
            error="Traceback (most recent call last):\nKeyError: 'payments'",
        )
    )
    tree.apply(failed_call("r", "bad", root_id, "RateLimitError: slow down"))
    return tree, root_id, child_id


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("outage", {"root"}),
        ("SUMMARISE PART 7", {"llm"}),
        ("summary 7", {"llm"}),
        ("llm_query_batched", {"root", "child"}),
        ("deprecationwarning", {"child"}),
        ("keyerror: 'payments'", {"child"}),
        ("child answer", {"child"}),
        ("let me look", {"root", "child"}),
        ("slow down", {"bad"}),
        ("test-model", {"root", "child", "llm"}),
        ("nothing like this", set()),
    ],
    ids=[
        "prompt",
        "llm-prompt-any-case",
        "response",
        "code",
        "stderr",
        "traceback",
        "answer",
        "reply",
        "error",
        "model",
        "none",
    ],
)
def test_search_finds_text_anywhere_in_a_call(text: str, found: set[str]) -> None:
    tree, root_id, child_id = _tree()
    names = {root_id: "root", child_id: "child", "bad": "bad"}
    search = CallSearch(tree, text)
    assert {names.get(n.call_id, "llm") for n in search.matched} == found


def test_matches_are_shown_with_their_ancestors_only() -> None:
    tree, root_id, child_id = _tree()
    search = CallSearch(tree, "summary 7")
    leaf = tree.nodes[child_id].children[0]
    assert search.shown == {leaf, tree.nodes[child_id], tree.nodes[root_id]}
    assert tree.nodes["bad"] not in search


def test_a_search_follows_a_live_run() -> None:
    tree, root_id, _child = _tree()
    search = CallSearch(tree, "needle")
    assert not search.shown
    changes = tree.apply(
        [
            ev.TurnStarted(run_id="r", call_id=root_id, index=1),
            ev.CellExecuted(
                run_id="r",
                call_id=root_id,
                turn=1,
                index=0,
                code="print(haystack)",
                stdout="a needle here",
                stderr="",
                error=None,
                duration_s=0.1,
            ),
        ]
    )
    assert search.update(changes)
    assert search.shown == {tree.nodes[root_id]}
    assert not search.update(tree.apply(llm_call("r", root_id, 2, 9.0, 8)))
