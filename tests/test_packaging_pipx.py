"""`pipx install .` as a user runs it (`make package-test`; deselected from `make test`).

pipx (pinned) is installed into a venv of the test's own, and installs this checkout into a
temporary PIPX_HOME and PIPX_BIN_DIR: both entry points land there, the command line runs, and
the installed app finds its resources under the venv's share/ folder.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rlm_desktop import __version__
from tests.cli import ROOT, isolated_env
from tests.test_self_check import check_lines

pytestmark = pytest.mark.package

PIPX = "pipx==1.18.4"
INSTALL_TIMEOUT_S = 1200


def test_pipx_install_puts_the_command_and_the_window_on_the_path(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True)
    pipx = subprocess.run(
        [str(tools / "bin" / "pip"), "install", "--quiet", PIPX],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert pipx.returncode == 0, pipx.stdout + pipx.stderr
    env = isolated_env(tmp_path / "home")
    env.pop("PYTHONPATH")  # the installed package, not this checkout
    bin_dir = tmp_path / "bin"
    env.update(
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(bin_dir),
        PIPX_MAN_DIR=str(tmp_path / "man"),
    )
    base_python = getattr(sys, "_base_executable", sys.executable)
    installed = subprocess.run(
        [str(tools / "bin" / "pipx"), "install", "--python", base_python, str(ROOT)],
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (bin_dir / "rlm-desktop-gui").is_file()

    def installed_app(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(bin_dir / "rlm-desktop"), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            cwd=tmp_path,
        )

    version = installed_app("--version")
    assert version.stdout.strip() == f"rlm-desktop {__version__}", version.stderr
    checked = installed_app("--self-check")
    print(checked.stdout)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert all(state in ("ok", "warn") for state, _ in check_lines(checked.stdout).values())
    venv_python = tmp_path / "pipx" / "venvs" / "rlm-desktop" / "bin" / "python"
    resources = subprocess.run(
        [str(venv_python), "-c", "from rlm_desktop import paths; print(paths.RESOURCES)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert Path(resources) == venv_python.parents[1] / "share" / "rlm-desktop" / "resources"
    assert (Path(resources) / "profiles" / "profiles.toml").is_file()
