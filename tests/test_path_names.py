"""A path written on another system is named by its last part: a shared database or an
evaluation made on Windows (`C:\\Users\\ana\\tasks.jsonl`, `\\\\server\\share\\q.csv`) is read on
macOS and Linux too, where a backslash is no separator, and a Mac's or Linux's paths on Windows."""

from __future__ import annotations

import pytest

from rlm_desktop.evaluation.history import describe_tasks
from rlm_desktop.evaluation.task_sets import TaskSpec
from rlm_desktop.formatting import file_name


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("C:\\Users\\ana\\tasks.jsonl", "tasks.jsonl"),
        ("c:/Users/ana/tasks.jsonl", "tasks.jsonl"),
        ("\\\\fileserver\\team\\tasks.jsonl", "tasks.jsonl"),
        ("/home/ana/tasks.jsonl", "tasks.jsonl"),
        ("tasks.jsonl", "tasks.jsonl"),
        ("C:\\", "C:\\"),
    ],
)
def test_a_path_from_any_system_is_named_by_its_last_part(path: str, name: str) -> None:
    assert file_name(path) == name


def test_an_evaluation_made_on_windows_names_its_task_file() -> None:
    spec = TaskSpec(kinds=("C:\\Users\\ana\\evaluations\\contracts.jsonl",))
    assert describe_tasks(spec) == "contracts.jsonl"
