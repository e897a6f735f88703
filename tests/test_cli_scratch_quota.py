"""Model code aimed at the disk (issue #41): as an ordinary user, it fills its scratch folder,
then locks it (`chmod 000` a folder, `chmod 500` its parent). The run's scratch holds at most its
quota, the cell that filled it says why, the session is recorded whole, the clean-up leaves
nothing behind, and the next run goes ahead.

The data folder is a real small disk (a tmpfs of the test's own). Two ways the quota holds, both
run here: a tmpfs of the quota's size in the sandbox's own mount namespace (Linux with user
namespaces), and the app's checks of the folder on the disk, which is what macOS and a Linux whose
user namespaces are closed (Ubuntu's AppArmor default) get — run here with user namespaces closed
for real, in a namespace whose `max_user_namespaces` is 0.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli import ROOT, isolated_env, run_cli, unprivileged
from tests.conftest import TEST_MODEL
from tests.scripted_rlm import repl, scripted
from tests.scripted_server import ScriptedServer
from tests.small_disk import free_bytes, small_disk

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux disks")

MIB = 1024 * 1024
FILL = (
    "import os\n"
    "os.makedirs('hoard/locked', exist_ok=True)\n"
    "n = 0\n"
    "while True:\n"
    "    with open(f'hoard/locked/{n}.bin', 'wb') as f:\n"
    "        f.write(b'x' * (1 << 20))\n"
    "    n += 1\n"
)
GHOST = (  # unlinked files written through their descriptors: no folder shows them
    "import os\n"
    "kept = []\n"
    "while True:\n"
    "    f = open('ghost.bin', 'wb')\n"
    "    os.unlink('ghost.bin')\n"
    "    kept.append(f)\n"
    "    for _ in range(16):\n"
    "        f.write(b'y' * (1 << 20))\n"
    "        f.flush()\n"
)
LOCK = (  # where the sandbox lets it (seccomp refuses it on a Linux without mount namespaces)
    "import os\n"
    "os.makedirs('hoard/locked', exist_ok=True)\n"
    "open('hoard/locked/last.bin', 'wb').write(b'z' * 4096)\n"
    "try:\n"
    "    os.chmod('hoard/locked', 0)\n"
    "    os.chmod('hoard', 0o500)\n"
    "    print('locked')\n"
    "except OSError as error:\n"
    "    print('not locked:', error)\n"
)
CLOSED_NAMESPACES = """
import ctypes, os, sys
with open('/proc/sys/user/max_user_namespaces', 'w') as limit:
    limit.write('0')
libc = ctypes.CDLL(None, use_errno=True)
for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH: file modes bind, as a user's
    libc.prctl(24, capability, 0, 0, 0)
os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
"""


def _run_args(server: ScriptedServer, document: Path, quota_mb: int) -> list[str]:
    return ["run", "--query", "How many zebrafish?", "--doc", str(document), "--model",
            TEST_MODEL, "--api-base", server.base_url, "--mode", "rlm", "--json",
            "--scratch-quota", str(quota_mb), "--cell-timeout", "60"]  # fmt: skip


def _closed_namespaces(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """`rlm-desktop *args` as an ordinary user on a system whose user namespaces are closed."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is needed to close user namespaces")
    tried = subprocess.run(["unshare", "--user", "--map-root-user", "true"], check=False)
    if tried.returncode:
        pytest.skip("this machine gives no user namespace to close")
    return subprocess.run(
        ["unshare", "--user", "--map-root-user", sys.executable, "-c", CLOSED_NAMESPACES,
         "-m", "rlm_desktop", *args],
        cwd=ROOT, env=isolated_env(home), capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip


def _session(home: Path, session_id: str) -> dict[str, Any]:
    shown = run_cli("sessions", "show", session_id, "--json", home=home)
    assert shown.returncode == 0, shown.stderr
    return dict(json.loads(shown.stdout))


def _the_disk_came_back(home: Path, before: int, session_id: str) -> None:
    assert not (home / "scratch" / session_id).exists()
    assert free_bytes(home) > before - 8 * MIB  # what the record took, no more


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("Zebrafish: 7 in tank A.\n")
    return path


def test_a_quota_in_memory_holds_and_nothing_reaches_the_disk(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    scripted_server.respond_with(scripted(root=[repl(FILL), repl(LOCK), repl("FINAL('7')")]))
    with small_disk(isolated_home, 48 * MIB):
        before = free_bytes(isolated_home)
        ran = run_cli(*_run_args(scripted_server, document, 16), home=isolated_home,
                      timeout=300, **unprivileged())  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        result = json.loads(ran.stdout)
        if not result["sandbox"].startswith("landlock") or "mntns" not in result["sandbox"]:
            pytest.skip(f"no mount namespace for the sandbox here ({result['sandbox']})")
        session = _session(isolated_home, result["session_id"])
        _the_disk_came_back(isolated_home, before, result["session_id"])
        again = run_cli(*_run_args(scripted_server, document, 16), home=isolated_home,
                        timeout=300, **unprivileged())  # fmt: skip
    assert result["status"] == "completed"
    filled, locked, final = session["turns"]
    assert "No space left on device" in filled["error"]
    assert "may take at most 16 MB (setting scratch_quota_mb) in all" in filled["error"]
    assert locked["stdout"].strip() == "locked"
    assert final["error"] is None
    assert session["session"]["status"] == "completed"
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize("how", ["fill", "ghost"])
def test_a_quota_checked_on_disk_holds_where_user_namespaces_are_closed(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path, how: str
) -> None:
    attack = FILL if how == "fill" else GHOST
    scripted_server.respond_with(scripted(root=[repl(attack), repl(LOCK), repl("FINAL('7')")]))
    with small_disk(isolated_home, 512 * MIB):
        before = free_bytes(isolated_home)
        ran = _closed_namespaces(*_run_args(scripted_server, document, 64), home=isolated_home)
        assert ran.returncode == 0, ran.stderr
        result = json.loads(ran.stdout)
        assert "mntns" not in result["sandbox"]
        session = _session(isolated_home, result["session_id"])
        _the_disk_came_back(isolated_home, before, result["session_id"])
        again = _closed_namespaces(*_run_args(scripted_server, document, 64), home=isolated_home)
    assert result["status"] == "completed"
    filled, locked, final = session["turns"]
    assert "the REPL worker was stopped" in filled["error"]
    assert "its files were removed" in filled["error"]
    assert "may take at most 64 MB (setting scratch_quota_mb)" in filled["error"]
    if how == "ghost":  # no folder shows the file: the disk's free space tells
        assert "the disk lost" in filled["error"]
    assert locked["stdout"].startswith(("locked", "not locked"))
    assert final["error"] is None
    assert again.returncode == 0, again.stderr


def test_on_a_nearly_full_disk_model_code_may_write_nothing_and_is_told_why(
    scripted_server: ScriptedServer, document: Path, isolated_home: Path
) -> None:
    scripted_server.respond_with(scripted(root=[repl(FILL), repl("FINAL('7')")]))
    with small_disk(isolated_home, 96 * MIB):
        ran = _closed_namespaces(*_run_args(scripted_server, document, 64), home=isolated_home)
        assert ran.returncode == 0, ran.stderr
        result = json.loads(ran.stdout)
        session = _session(isolated_home, result["session_id"])
    filled, final = session["turns"]
    assert "File too large" in filled["error"]
    assert "may take at most 0 MB, all the disk could spare" in filled["error"]
    assert final["error"] is None
    assert os.path.isdir(isolated_home)
