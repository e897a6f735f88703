"""`make run` installs the app, not its tests: what the app imports comes with its runtime
dependencies (pyproject's `dependencies`, no extra), and the Makefile's `run` installs no more.

The import scan reads every module of `rlm_desktop/` (the cluster's, which Ray's `cluster` extra
serves, and the wasm guest's, which runs inside WebAssembly, aside) and maps each top-level import
to the distribution installed for it; each must be one the runtime dependencies bring.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.cli import ROOT

PACKAGE = ROOT / "rlm_desktop"
# Ray and what seals keys for it are the `cluster` extra; the guest's modules run in WebAssembly
# (componentize-py's bindings, its own standard library).
NOT_RUNTIME = (PACKAGE / "cluster", PACKAGE / "engine" / "sandbox" / "wasm" / "guest")
# The Makefile puts OpenCV's headless build (the same `cv2`) in place of the full one RapidOCR names
# (the app imports neither; the tests compare our OCR with RapidOCR's, which does).
STANDS_IN_FOR = {"opencv-python-headless": "opencv-python"}


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def closure(requirements: list[str]) -> set[str]:
    """The distributions `requirements` install (each one's own, markers as on this machine,
    no extras asked), as canonical names."""
    found: set[str] = set()
    pending = [Requirement(text) for text in requirements]
    while pending:
        requirement = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        found.add(name)
        try:
            pending += [Requirement(text) for text in importlib.metadata.requires(name) or ()]
        except importlib.metadata.PackageNotFoundError:
            continue  # a platform's own (pywin32-ctypes on Windows): not here to follow
    return found


def imported_modules(folder: Path, aside: tuple[Path, ...] = NOT_RUNTIME) -> dict[str, str]:
    """Top-level names of the absolute imports in the modules under `folder` but those `aside`:
    {name: the first file importing it}."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        if any(path.is_relative_to(folder) for folder in aside):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.partition(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_module_the_app_imports_comes_with_its_runtime_dependencies() -> None:
    runtime = closure(pyproject()["project"]["dependencies"])
    by_module = importlib.metadata.packages_distributions()
    outside = []
    for module, where in sorted(imported_modules(PACKAGE).items()):
        if module in sys.stdlib_module_names or module == "rlm_desktop":
            continue
        installed = {canonicalize_name(d) for d in by_module.get(module, [])}
        distributions = {STANDS_IN_FOR.get(name, name) for name in installed}
        if not distributions & runtime:
            outside.append(f"{module} ({where}; from {sorted(installed) or 'nothing'})")
    assert not outside, "imported but not a runtime dependency: " + ", ".join(outside)


def test_the_app_imports_neither_opencv_nor_rapidocrs_code() -> None:
    # OCR is our own pipeline over RapidOCR's model files: the frozen app ships no OpenCV.
    imported = imported_modules(PACKAGE)
    assert "cv2" not in imported, imported.get("cv2")
    assert "rapidocr_onnxruntime" not in imported, imported.get("rapidocr_onnxruntime")


def test_the_scan_sees_the_imports_of_the_extras_it_sets_aside() -> None:
    # The scan is not blind: Ray, imported in cluster/ only, is found there and in no other module.
    assert "ray" in imported_modules(PACKAGE / "cluster", aside=())
    assert "ray" not in imported_modules(PACKAGE)
    assert canonicalize_name("ray") not in closure(pyproject()["project"]["dependencies"])


def pip_installs(target: str) -> list[str]:
    """What `make <target>` pip-installs from scratch (`make -n -B`: printed, not run): each
    line's requirements, the project as `.[extras]`."""
    done = subprocess.run(
        ["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, timeout=60,
        check=True,
    )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if re.search(r"-m pip install\b", line)]
    return [" ".join(w for w in line.split("pip install", 1)[1].split() if not w.startswith("-"))
            for line in lines]  # fmt: skip


def test_make_run_installs_the_app_without_the_extras_of_tests_cluster_or_the_reference() -> None:
    installs = pip_installs("run")
    assert "'.[guest]'" in installs, installs
    assert [line for line in installs if line.startswith("opencv-python-headless==")], installs
    extras = pyproject()["project"]["optional-dependencies"]
    assert not [line for line in installs if re.search(r"\b(dev|cluster|package)\b", line)]
    for requirement in (*extras["dev"], *extras["cluster"], "rlms"):
        name = Requirement(requirement).name
        if name != "rlm-desktop":
            assert not [line for line in installs if name in line], (name, installs)


def test_make_test_adds_the_dev_and_cluster_extras_and_the_reference_on_top() -> None:
    installs = pip_installs("test")
    assert "'.[guest]'" in installs, installs
    assert "'.[dev,cluster]'" in installs, installs
    assert [line for line in installs if line.startswith("rlms==")], installs


def test_the_guest_extra_is_all_that_builds_the_guest_and_dev_brings_it() -> None:
    extras = pyproject()["project"]["optional-dependencies"]
    builders = [r for r in pyproject()["build-system"]["requires"] if "componentize" in r]
    assert extras["guest"] == builders
    assert "rlm-desktop[guest]" in extras["dev"]
