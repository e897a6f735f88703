"""The wheel's build step beyond pyproject.toml: the wasm sandbox's guest is built into it.

Everything else is declared in pyproject.toml; this only makes `build_py` run
`rlm_desktop/engine/sandbox/wasm/build.py` first (componentize-py is a build requirement), so a
wheel built from a clean checkout carries a guest made from its own sources.
"""

import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildWithGuest(build_py):
    """`build_py`, after building the guest unless it is current."""

    def run(self) -> None:
        subprocess.run(
            [sys.executable, "-m", "rlm_desktop.engine.sandbox.wasm.build"], cwd=ROOT, check=True
        )
        super().run()


setup(cmdclass={"build_py": BuildWithGuest})
