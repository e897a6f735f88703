"""The import floors hold: `lint-imports` keeps pyproject's contracts on the package as it is, and
breaks them, naming the import, once a module reaches up a floor, imports Qt outside ui/ or closes
an import circle (shown on a copy of the package)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` over the package in `tree`, with the contracts of `tree`'s pyproject.toml."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_package_keeps_its_contracts() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    """A copy of the package and its pyproject.toml, free to be broken."""
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "rlm_desktop", tmp_path / "rlm_desktop", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("module", "line", "said"),
    [
        (
            "engine/bus.py",
            "import rlm_desktop.review",
            "rlm_desktop.engine is not allowed to import rlm_desktop.review",
        ),
        ("store/queries.py", "import PySide6", "rlm_desktop.store is not allowed to import PySide6"),
        (
            "engine/truncation.py",
            "import rlm_desktop.engine.observation",
            "No cycles are allowed in rlm_desktop.engine",
        ),
    ],
)
def test_reaching_up_importing_qt_or_closing_a_circle_breaks_a_contract(
    copied: Path, module: str, line: str, said: str
) -> None:
    with (copied / "rlm_desktop" / module).open("a", encoding="utf-8") as source:
        source.write(f"\n{line}\n")
    done = lint_imports(copied)
    assert done.returncode == 1, done.stdout + done.stderr
    assert said in done.stdout
