"""A release build and a `pipx install` of it, as a user runs them (`make package-test`;
deselected from `make test`).

The checkout's files, without anything built in it (as a fresh clone has them), go through
`python -m build` as a release does: an sdist, and a wheel built from that sdist with build
isolation. The sdist carries the wasm guest's sources and no guest; the wheel carries the guest it
built from them. pipx (pinned) installs that wheel into a temporary PIPX_HOME and PIPX_BIN_DIR:
both entry points land there, the command line runs, its self-check runs `print(1)` in the wasm
sandbox, a scripted run's model code runs there, and the app finds its resources under the venv's
share/ folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rlm_desktop import __version__
from rlm_desktop.engine.sandbox.wasm import build
from rlm_desktop.engine.sandbox.wasm.compiled import runtime_version
from tests.cli import ROOT
from tests.packaged import packaged_env, run_in_wasm
from tests.scripted_server import ScriptedServer
from tests.test_self_check import check_lines

pytestmark = pytest.mark.package

PIPX = "pipx==1.18.4"
BUILD = "build==1.6.1"
INSTALL_TIMEOUT_S = 1200
PACKAGE = "rlm_desktop/engine/sandbox"
STALE_GUEST = b"a guest built earlier in the checkout: never shipped"


@dataclass(frozen=True)
class Release:
    """The sdist and wheel built from a clean copy of the checkout, and the pipx install."""

    sdist: Path
    wheel: Path
    bin_dir: Path
    home: Path
    app: Callable[..., subprocess.CompletedProcess[str]]


def clean_copy(destination: Path) -> Path:
    """The checkout's files as a clone has them (tracked, and new ones not ignored), plus the
    guest built here, as a developer's checkout holds it: the sdist must leave it out."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    guest = destination / PACKAGE / "wasm" / "guest.wasm"
    guest.write_bytes(STALE_GUEST)
    return destination


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    folder = tmp_path_factory.mktemp("release")
    tools = folder / "tools"
    subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True)
    pip = subprocess.run(
        [str(tools / "bin" / "pip"), "install", "--quiet", PIPX, BUILD],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr
    source = clean_copy(folder / "source")
    built = subprocess.run(
        [str(tools / "bin" / "python"), "-m", "build", "--outdir", str(folder / "dist"), source],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (sdist,) = (folder / "dist").glob("*.tar.gz")
    (wheel,) = (folder / "dist").glob("*.whl")
    home = folder / "home"
    env = packaged_env(home)
    bin_dir = folder / "bin"
    env.update(
        PIPX_HOME=str(folder / "pipx"),
        PIPX_BIN_DIR=str(bin_dir),
        PIPX_MAN_DIR=str(folder / "man"),
    )
    base_python = getattr(sys, "_base_executable", sys.executable)
    installed = subprocess.run(
        [str(tools / "bin" / "pipx"), "install", "--python", base_python, str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    def app(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(bin_dir / "rlm-desktop"), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            cwd=folder,
        )

    return Release(sdist, wheel, bin_dir, home, app)


def test_the_sdist_carries_the_guests_sources_and_the_wheel_the_guest_built_from_them(
    release: Release,
) -> None:
    guest_inputs = {path.relative_to(ROOT).as_posix() for path in build.inputs()}
    assert f"{PACKAGE}/wasm/guest/repl.wit" in guest_inputs
    assert f"{PACKAGE}/worker/serve.py" in guest_inputs
    with tarfile.open(release.sdist) as sdist:
        top = f"rlm_desktop-{__version__}/"
        names = {name.removeprefix(top) for name in sdist.getnames()}
    assert guest_inputs | {"setup.py", "pyproject.toml", f"{PACKAGE}/wasm/build.py"} <= names
    assert not [name for name in names if ".wasm" in name], "the sdist ships sources only"
    with zipfile.ZipFile(release.wheel) as wheel:
        guest = wheel.read(f"{PACKAGE}/wasm/guest.wasm")
    assert guest.startswith(b"\0asm")  # a WebAssembly binary, made by the wheel's own build
    assert len(guest) > 10_000_000  # CPython and the standard library model code imports
    assert release.wheel.name.endswith("-py3-none-any.whl")  # one wheel for every system
    print(
        f"wheel: {release.wheel.stat().st_size / 1e6:.1f} MB, its guest {len(guest) / 1e6:.1f} MB"
    )


def test_pipx_install_puts_the_command_and_the_window_on_the_path(release: Release) -> None:
    assert (release.bin_dir / "rlm-desktop-gui").is_file()
    version = release.app("--version")
    assert version.stdout.strip() == f"rlm-desktop {__version__}", version.stderr
    checked = release.app("--self-check")
    print(checked.stdout)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    lines = check_lines(checked.stdout)
    assert all(state in ("ok", "warn") for state, _ in lines.values())
    assert lines["wasm sandbox"][0] == "ok"
    assert lines["wasm sandbox"][1].startswith(
        f"ran print(1) in wasm+wasmtime{runtime_version()}"
    ), lines["wasm sandbox"][1]
    venv_python = release.bin_dir.parent / "pipx" / "venvs" / "rlm-desktop" / "bin" / "python"
    resources = subprocess.run(
        [str(venv_python), "-c", "from rlm_desktop import paths; print(paths.RESOURCES)"],
        env=packaged_env(release.home),
        capture_output=True,
        text=True,
        check=True,
        cwd=release.bin_dir.parent,
    ).stdout.strip()
    assert Path(resources) == venv_python.parents[1] / "share" / "rlm-desktop" / "resources"
    assert (Path(resources) / "profiles" / "profiles.toml").is_file()


def test_a_run_of_the_installed_app_runs_model_code_in_its_wasm_sandbox(
    release: Release, tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    run = run_in_wasm([str(release.bin_dir / "rlm-desktop")], tmp_path / "home", scripted_server)
    print(f"pipx install, run --sandbox wasm on a new data folder: {run.seconds:.1f} s")
