"""The store and the sessions command import and work without Qt and without litellm."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"PySide6", "qasync", "shiboken6"}:
            raise ImportError(f"{name} is blocked in this test")
        return None

sys.meta_path.insert(0, Block())
import rlm_desktop.store
import rlm_desktop.commands.sessions
from rlm_desktop.store import Store
Store().close()
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {"litellm", "PySide6", "qasync"})
print(",".join(heavy))
"""


def test_store_imports_without_qt_or_litellm() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
