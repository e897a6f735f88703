"""`make test` and `make screenshots` install the Debian packages they need, or name them in one line."""

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "debian-packages"

pytestmark = pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="a Debian machine")


def run_as_nobody(*packages: str) -> subprocess.CompletedProcess[str]:
    # A copy in a folder anyone may read: the checkout may sit in root's private home.
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o755)
        script = Path(folder) / SCRIPT.name
        shutil.copy(SCRIPT, script)
        script.chmod(0o755)
        command = [str(script), "test", *packages]
        if os.geteuid() == 0:
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_installed_packages_pass_in_silence() -> None:
    done = run_as_nobody("coreutils", "dpkg")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_user_who_cannot_install_is_told_in_one_line_which_packages_and_how() -> None:
    done = run_as_nobody("coreutils", "rlm-desktop-no-such-package", "dpkg", "another-missing-one")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert re.fullmatch(
        r"make test needs the Debian packages: rlm-desktop-no-such-package another-missing-one "
        r"\(as root: apt-get install rlm-desktop-no-such-package another-missing-one\)\n",
        done.stderr,
    )


def test_make_test_checks_every_package_it_names_before_building_the_venv() -> None:
    planned = subprocess.run(
        ["make", "--dry-run", "--always-make", "test"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()
    check = next(i for i, line in enumerate(planned) if "tools/debian-packages test" in line)
    named = set(planned[check].split()[2:])
    assert {"chromium", "desktop-file-utils", "appstream", "libegl1"} <= named
    venv = [i for i, line in enumerate(planned) if "-m venv" in line or "pip install" in line]
    assert venv, planned
    assert all(check < i for i in venv)


def test_ci_runs_exactly_the_readme_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [
        line for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    assert commands[-2:] == ["make test", "make test-real"]
    assert all(line.startswith(("set ", "cd ")) for line in commands[:-2])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`make test`" in readme
    assert "`make test-real`" in readme


def test_make_test_real_checks_for_a_compiler_before_building_the_server() -> None:
    planned = subprocess.run(
        ["make", "--dry-run", "--always-make", "test-real"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()
    check = next(i for i, line in enumerate(planned) if "tools/debian-packages test-real" in line)
    assert "build-essential" in planned[check].split()[2:]
    build = next(i for i, line in enumerate(planned) if line.startswith("tools/real-model "))
    assert check < build
