"""Every runtime dependency installs on Windows x64 and on macOS on Apple silicon from a wheel, so
`pipx install` there needs no compiler: the dependencies of pyproject.toml, what they depend on in
turn on that system (markers read as that system reads them: colorama and pywin32-ctypes on
Windows, not Linux's jeepney), at the versions installed here, and the runtime that issue #42's
wasm sandbox brings.

Each system is asked of the package index with `pip download --only-binary :all: --platform ...
--no-deps`, one call for all of them (about 6 s), the files kept in pytest's cache folder so a
later run only asks the index; a pin with no wheel there costs a call more, once: which did is
remembered in the cache too, and asked by its range (or built, as source) from the start. A package published only as source is fine when it is pure Python (its wheel built
here is tagged `none-any`): it is named, not failed. No package index with those systems' wheels reachable: skipped, saying so.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from tests.cli import ROOT

PYTHON = {
    "python_version": "3.11",
    "python_full_version": "3.11.9",
    "implementation_name": "cpython",
    "implementation_version": "3.11.9",
    "platform_python_implementation": "CPython",
}


@dataclass(frozen=True)
class Target:
    """A system users install on: its wheel platform tag and how its markers read."""

    name: str
    platform: str
    markers: dict[str, str]


TARGETS = [
    Target(
        "Windows x64",
        "win_amd64",
        {"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows",
         "platform_machine": "AMD64", "platform_release": "10", "platform_version": "10.0.19045",
         **PYTHON},
    ),
    # macOS 14 is the oldest our pins have wheels for (onnxruntime 1.32; PySide6 and pypdfium2
    # need 13): docs/install.md's table says so.
    Target(
        "macOS 14+ on Apple silicon",
        "macosx_14_0_arm64",
        {"os_name": "posix", "sys_platform": "darwin", "platform_system": "Darwin",
         "platform_machine": "arm64", "platform_release": "23.0.0", "platform_version": "",
         **PYTHON},
    ),
]  # fmt: skip
PROBE = "psutil"
"""A dependency with wheels for every system: when pip finds none of it, no package index that
serves other systems' wheels is reachable (a local mirror of Linux wheels may still answer)."""
NOT_FOUND = re.compile(r"No matching distribution found for (\S+)")


def runtime_requirements() -> list[Requirement]:
    """pyproject's `dependencies`."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(line) for line in project["dependencies"]]


def applies(requirement: Requirement, markers: dict[str, str], extras: set[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({**markers, "extra": e}) for e in extras or {""})


def installed(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


@dataclass
class Tree:
    """What to ask pip for on a target, by canonical name: the version installed here where there
    is one, else what the packages that need it accept (`accepted`, all of them at once)."""

    asked: dict[str, str]
    accepted: dict[str, str]


def dependency_tree(target: Target) -> Tree:
    """Every package the app needs on `target`: the requirements that apply there, followed
    through the copies installed here (a package of that system's only is asked by its range)."""
    asked: dict[str, str] = {}
    accepted: dict[str, SpecifierSet] = {}
    pending = [r for r in runtime_requirements() if applies(r, target.markers, set())]
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        accepted[name] = accepted.get(name, SpecifierSet()) & requirement.specifier
        if name in asked:
            continue
        found = installed(requirement.name)
        if found is None or found.version not in requirement.specifier:
            asked[name] = f"{requirement.name}{requirement.specifier}"
            continue
        asked[name] = f"{requirement.name}=={found.version}"
        extras = {"", *requirement.extras}
        for line in found.requires or []:
            inner = Requirement(line)
            if applies(inner, target.markers, extras):
                pending.append(inner)
    return Tree(asked, {name: f"{name}{accepted[name]}" for name in asked})


def pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", *args, "--progress-bar", "off"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def download(
    target: Target, requirements: list[str], folder: Path
) -> subprocess.CompletedProcess[str]:
    return pip(
        "download", "--no-deps", "--only-binary", ":all:", "--platform", target.platform,
        "--python-version", "3.11", "--implementation", "cp", "-d", str(folder), *requirements,
    )  # fmt: skip


def pure_python(requirement: str, folder: Path) -> bool:
    """True when `requirement`'s source builds a pure-Python wheel (tagged `none-any`), built here
    into `folder` once."""
    stem = canonicalize_name(Requirement(requirement).name).replace("-", "_")
    built = lambda: [w for w in folder.glob("*.whl") if w.name.lower().startswith(stem + "-")]  # noqa: E731
    if not built():
        pip("wheel", "--no-deps", "--no-binary", ":all:", "-w", str(folder), requirement)
    return any(wheel.name.endswith("-none-any.whl") for wheel in built())


@pytest.mark.parametrize("target", TARGETS, ids=[target.platform for target in TARGETS])
def test_every_runtime_dependency_installs_from_a_wheel(
    target: Target, cache: pytest.Cache, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = cache.mkdir(f"platform-wheels-{target.platform}")
    tree = dependency_tree(target)
    probe = download(target, [tree.asked[PROBE]], folder)
    if probe.returncode != 0:
        last = probe.stderr.strip().splitlines()[-1:]
        pytest.skip(f"no package index with {target.name} wheels reachable: {last}")
    pending, older, without_wheel = dict(tree.asked), [], []
    remembered = f"platform-wheels/{target.platform}"
    known = cache.get(remembered, {"other_release": [], "no_wheel": []})
    for name in set(known["other_release"]) & set(pending):
        older.append(pending[name])
        pending[name] = tree.accepted[name]
    without_wheel += [pending.pop(name) for name in set(known["no_wheel"]) & set(pending)]
    while True:
        done = download(target, sorted(pending.values()), folder)
        if done.returncode == 0:
            break
        missing = NOT_FOUND.search(done.stderr)
        assert missing is not None, done.stderr
        name = canonicalize_name(Requirement(missing[1]).name)
        if pending[name] != tree.accepted[name]:  # the version installed here: another may do
            older.append(pending[name])
            pending[name] = tree.accepted[name]
        else:
            without_wheel.append(pending.pop(name))
            older = [r for r in older if canonicalize_name(Requirement(r).name) != name]
    names = lambda found: sorted(canonicalize_name(Requirement(r).name) for r in found)  # noqa: E731
    cache.set(remembered, {"other_release": names(older), "no_wheel": names(without_wheel)})
    sources = sources_only(without_wheel, cache.mkdir("platform-wheels-built"))
    assert sources == without_wheel, f"no wheel for {target.name}, and not pure Python: " + str(
        sorted(set(without_wheel) - set(sources))
    )
    with capsys.disabled():
        for line in [
            *(
                [f"another release than the one installed here has the wheel: {older}"]
                if older
                else []
            ),
            *([f"source only, pure Python: {sources}"] if sources else []),
        ]:
            print(f"\n{target.name}: {line}", end="")


def sources_only(requirements: list[str], folder: Path) -> list[str]:
    """Those of `requirements` whose source builds a pure-Python wheel."""
    return [requirement for requirement in requirements if pure_python(requirement, folder)]
