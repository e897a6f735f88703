"""Comparing two real recorded runs that differ in model, profile, depth, fan-out and answer."""

from __future__ import annotations

import pytest

from rlm_desktop import formatting as fmt
from rlm_desktop import paths
from rlm_desktop.review.compare import Comparison, Line, Segment, load_comparison, word_diff
from rlm_desktop.store import SessionNotFound, Store
from tests.review.recorded import MODELS, Plan, record_runs
from tests.scripted_server import ScriptedServer

LEFT = Plan("Count the fish in tank A.", fan_out=2, answer="There are 7 zebrafish in tank A.")
RIGHT = Plan(
    "Count the fish in tank A, again.",
    fan_out=5,
    answer="There are 9 zebrafish in tank A.\nTank B is empty.",
    model=MODELS[1],
    profile="small",
    max_depth=1,
)


@pytest.fixture
async def compared(scripted_server: ScriptedServer) -> Comparison:
    left, right = await record_runs(scripted_server, [LEFT, RIGHT])
    store = Store(paths.database_path())
    try:
        return load_comparison(store, left, right)
    finally:
        store.close()


def _line(lines: list[Line], name: str) -> Line:
    return next(line for line in lines if line.name == name)


async def test_settings_show_what_differs(compared: Comparison) -> None:
    settings = {line.name: line for line in compared.settings}
    assert (settings["Model"].left, settings["Model"].right) == MODELS
    assert (settings["Profile"].left, settings["Profile"].right) == (
        "local",
        "small",
    )  # a model no pattern names, on its own server
    assert (settings["Depth (max_depth)"].left, settings["Depth (max_depth)"].right) == ("2", "1")
    assert settings["Profile"].differs
    assert not settings["Documents"].differs
    assert not settings["Mode"].differs


async def test_figures_are_the_runs_own_with_the_change(compared: Comparison) -> None:
    left, right = compared.left.session, compared.right.session
    sub_calls = _line(compared.figures, "Sub-calls")
    assert (sub_calls.left, sub_calls.right) == (str(left["sub_calls"]), str(right["sub_calls"]))
    assert (left["sub_calls"], right["sub_calls"]) == (LEFT.fan_out, RIGHT.fan_out)
    assert sub_calls.change == "+3 (+150%)"
    cost = _line(compared.figures, "Cost")
    assert (cost.left, cost.right) == (fmt.cost(left["cost_usd"]), fmt.cost(right["cost_usd"]))
    assert right["cost_usd"] > left["cost_usd"]
    assert cost.change.startswith("+$")
    tokens = _line(compared.figures, "Input tokens")
    assert tokens.right == fmt.tokens(right["input_tokens"])
    assert _line(compared.figures, "Wall time").left == fmt.seconds(left["wall_s"])
    assert not _line(compared.figures, "Status").differs


async def test_answers_are_diffed(compared: Comparison) -> None:
    assert not compared.same_answer
    changed = [s for s in compared.answer if s.side != "same"]
    assert changed == [
        Segment("left", "7"),
        Segment("right", "9"),
        Segment("right", "\nTank B is empty."),
    ]
    assert "".join(s.text for s in compared.answer if s.side != "right") == LEFT.answer
    assert "".join(s.text for s in compared.answer if s.side != "left") == RIGHT.answer
    assert f"-{LEFT.answer}" in compared.answer_diff
    assert "+Tank B is empty." in compared.answer_diff


def test_word_diff_of_equal_texts_is_one_stretch() -> None:
    assert word_diff("same words", "same words") == [Segment("same", "same words")]
    assert word_diff("", "new") == [Segment("right", "new")]


def test_an_unknown_session_is_refused(isolated_home: object) -> None:
    store = Store(paths.database_path())
    try:
        with pytest.raises(SessionNotFound, match="no session"):
            load_comparison(store, "nope", "nada")
    finally:
        store.close()


def test_long_answers_are_diffed_line_by_line() -> None:
    left = "\n".join(f"line {n} says fish" for n in range(400))
    right = left.replace("line 200 says fish", "line 200 says whale")
    segments = word_diff(left, right)
    assert [s.text for s in segments if s.side == "left"] == ["line 200 says fish\n"]
    assert [s.text for s in segments if s.side == "right"] == ["line 200 says whale\n"]
    assert "".join(s.text for s in segments if s.side != "right") == left
