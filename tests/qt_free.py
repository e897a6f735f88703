"""Run a Python snippet in a fresh process in which some packages cannot be imported.

The Qt-free packages (engine, documents, store, review, providers, formatting) are checked by
running their imports with Qt blocked, as if PySide6 were not installed, in a process of their
own (this one has Qt loaded already). The same helper blocks litellm to check the fallbacks used
when it is missing.
"""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Iterable
from pathlib import Path

from tests.cli import run_python

QT = ("PySide6", "shiboken6", "qasync")

_BLOCKER = """\
import sys
from importlib.abc import MetaPathFinder


class _NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked in this test)")
        return None


sys.meta_path.insert(0, _NotInstalled())
"""


def run_without(
    code: str, blocked: Iterable[str], *, home: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run `code` (dedented) with the top-level packages `blocked`, isolated in `home`."""
    script = _BLOCKER.format(blocked=sorted(set(blocked))) + textwrap.dedent(code)
    return run_python("-c", script, home=home, timeout=timeout)


def run_without_qt(
    code: str, *, home: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run `code` (dedented) as if PySide6, shiboken6 and qasync were not installed."""
    return run_without(code, QT, home=home, timeout=timeout)
