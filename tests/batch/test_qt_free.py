"""The batch package and its command import without Qt (and without Ray or litellm)."""

from __future__ import annotations

from pathlib import Path

from tests.qt_free import run_without

SCRIPT = """
import importlib
import pkgutil
import sys

import rlm_desktop.batch
import rlm_desktop.commands.batch

for module in pkgutil.walk_packages(rlm_desktop.batch.__path__, "rlm_desktop.batch."):
    importlib.import_module(module.name)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {"PySide6", "qasync", "litellm", "ray"})
assert not heavy, heavy
print("ok")
"""


def test_the_batch_package_imports_with_qt_and_ray_blocked(isolated_home: Path) -> None:
    done = run_without(SCRIPT, ("PySide6", "shiboken6", "qasync", "ray"), home=isolated_home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok"]
