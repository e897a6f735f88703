"""The store and the sessions command import and work without Qt and without litellm."""

from __future__ import annotations

from pathlib import Path

from tests.qt_free import run_without_qt

SCRIPT = """
import sys

import rlm_desktop.store
import rlm_desktop.commands.sessions
from rlm_desktop.paths import database_path
from rlm_desktop.store import Store
Store(database_path()).close()
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {"litellm", "PySide6", "qasync"})
print(",".join(heavy))
"""


def test_store_imports_without_qt_or_litellm(isolated_home: Path) -> None:
    result = run_without_qt(SCRIPT, home=isolated_home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
