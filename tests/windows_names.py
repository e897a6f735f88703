"""Run our code in a Python that shows it only what Windows' Python has
(tests/windows_python/sitecustomize.py), with the portable paths forced, as Windows takes them."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

from rlm_desktop.portability import PORTABLE_ENV
from tests.cli import ROOT, run_cli, run_python

WINDOWS_PYTHON = ROOT / "tests" / "windows_python"


def windows_env() -> dict[str, str]:
    """The environment additions that make a Python started with them Windows-like."""
    return {"PYTHONPATH": f"{WINDOWS_PYTHON}{os.pathsep}{ROOT}", PORTABLE_ENV: "1"}


def run_windows_python(
    code: str, *, home: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `code` (dedented) in a Windows-like Python, isolated in `home`."""
    return run_python("-c", textwrap.dedent(code), home=home, env=windows_env(), timeout=timeout)


def run_windows_cli(*args: str, home: Path, **options: Any) -> subprocess.CompletedProcess[str]:
    """`rlm-desktop *args` in a Windows-like Python, isolated in `home`."""
    return run_cli(*args, home=home, env=windows_env(), **options)
