"""The evaluation package imports and generates tasks without Qt."""

from __future__ import annotations

from pathlib import Path

from tests.qt_free import run_without_qt

SCRIPT = """
import rlm_desktop.commands.eval
from rlm_desktop.evaluation import opening, report, runner, task_sets
tasks = task_sets.generate(task_sets.TaskSpec(kinds=tuple(task_sets.GENERATORS), lengths=(200,), count=1))
print(len(tasks))
"""


def test_evaluation_imports_with_qt_blocked(isolated_home: Path) -> None:
    result = run_without_qt(SCRIPT, home=isolated_home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["4"]
