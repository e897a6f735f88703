"""Generated tasks are deterministic for a seed, as long as asked, and their gold answers are
right (worked out again by brute force from the documents alone)."""

from __future__ import annotations

import re

import pytest

from rlm_desktop.evaluation.pairs import NO_PAIRS
from rlm_desktop.evaluation.scoring import PAIR
from rlm_desktop.evaluation.task_sets import GENERATORS, TaskSpec, generate
from rlm_desktop.evaluation.tasks import count
from tests.evaluation import brute_force

KINDS = tuple(GENERATORS)
SEEDS = (0, 1, 2)


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_tasks_other_seed_other_tasks(kind: str) -> None:
    spec = TaskSpec(kinds=(kind,), lengths=(600,), seed=7, count=3)
    first, again = generate(spec), generate(spec)
    other = generate(TaskSpec(kinds=(kind,), lengths=(600,), seed=8, count=3))
    assert first == again
    assert [t.documents for t in first] == [t.documents for t in again]
    assert [t.id for t in first] == [t.id for t in again]
    assert all(a.documents != b.documents for a, b in zip(first, other, strict=True))
    assert len({t.documents for t in first}) == 3  # each index is a task of its own


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("length", [500, 5_000])
def test_documents_hold_the_length_asked(kind: str, length: int) -> None:
    for task in generate(TaskSpec(kinds=(kind,), lengths=(length,), count=2)):
        measured = sum(count(text) for _name, text in task.documents)
        assert task.length == length
        assert length <= measured <= length * 1.03 + 60, (task.id, measured)


def test_needle_is_planted_once_at_its_depth_with_the_gold_value() -> None:
    for seed in SEEDS:
        for task in generate(TaskSpec(kinds=("needle",), lengths=(2_000,), seed=seed, count=4)):
            ((_name, text),) = task.documents
            needles = re.findall(r"One of the special magic numbers for ([\w-]+) is: (\d+)\.", text)
            assert len(needles) == 1
            key, value = needles[0]
            assert value == task.answer
            assert len(value) == 7
            assert f"for {key} mentioned" in task.question
            where = text.index("One of the special") / len(text)
            assert abs(where - task.details["depth"]) < 0.05


def test_aggregate_gold_answers_match_a_line_by_line_count() -> None:
    kinds = set()
    for seed in SEEDS:
        for task in generate(
            TaskSpec(kinds=("aggregate",), lengths=(800, 3_000), seed=seed, count=4)
        ):
            ((_name, text),) = task.documents
            assert brute_force.aggregate_answer(text, task.question) == task.answer, task.id
            assert "label" not in text  # labels are hidden
            kinds.add(task.details["question_kind"])
    assert kinds == {"count", "user_count", "compare", "most_common"}


def test_pairs_gold_answers_match_every_pair_checked() -> None:
    for seed in SEEDS:
        for task in generate(TaskSpec(kinds=("pairs",), lengths=(800, 3_000), seed=seed, count=4)):
            ((_name, text),) = task.documents
            expected = brute_force.pairs_answer(text, task.question)
            gold = {(int(a), int(b)) for a, b in PAIR.findall(task.answer)}
            assert gold == expected, task.id
            assert task.answer != NO_PAIRS or not expected


def test_code_gold_answers_match_the_parsed_call_graph() -> None:
    kinds = set()
    for seed in SEEDS:
        for task in generate(TaskSpec(kinds=("code",), lengths=(1_000, 4_000), seed=seed, count=4)):
            assert brute_force.code_answer(task.documents, task.question) == task.answer, task.id
            assert len(task.documents) >= 3
            kinds.add(task.details["question_kind"])
    assert kinds == {"calls", "where"}
