"""Run `rlm-desktop` (or another of our entry points) in a subprocess, cut off from the user's own.

Every test that starts the CLI, the GUI, or our packages in a Python process of their own goes
through here, so that none of them can read or write a developer's keys or data: the data folder
is the test's own, the keyring is the failing backend (keyring's configuration and data folders
point into the test's folder too), provider key variables are removed, Qt draws off screen, and
litellm uses its bundled price map instead of fetching one.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rlm_desktop.paths import HOME_ENV
from rlm_desktop.providers.registry import PROVIDERS

ROOT = Path(__file__).resolve().parents[1]
CLI = "rlm_desktop"
NO_KEYRING = "keyring.backends.fail.Keyring"
# Keys of the providers we know, and litellm's `<PROVIDER>_API_KEY` for the rest.
_KEY_VARIABLE = re.compile(r"_API_KEY$")
_PROVIDER_KEYS = {p.env_var for p in PROVIDERS.values() if p.env_var}
_PR_CAPBSET_DROP, _CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 24, 1, 2


def isolated_env(home: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without provider keys, isolated in `home`, plus `env`."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if name not in _PROVIDER_KEYS and not _KEY_VARIABLE.search(name)
    }
    return {
        **kept,
        HOME_ENV: str(home),
        "PYTHONPATH": str(ROOT),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHON_KEYRING_BACKEND": NO_KEYRING,
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "QT_QPA_PLATFORM": "offscreen",
        **(env or {}),
    }


def run_python(
    *args: str,
    home: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    **options: Any,
) -> subprocess.CompletedProcess[str]:
    """`python *args` from the repository root, isolated in `home`; text output captured."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=isolated_env(home, env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **options,
    )


def run_cli(
    *args: str,
    home: Path,
    env: Mapping[str, str] | None = None,
    module: str = CLI,
    timeout: float = 120,
    **options: Any,
) -> subprocess.CompletedProcess[str]:
    """`rlm-desktop *args` (or `python -m module *args`) run to its end, isolated in `home`."""
    return run_python("-m", module, *args, home=home, env=env, timeout=timeout, **options)


def start_cli(
    *args: str,
    home: Path,
    env: Mapping[str, str] | None = None,
    module: str = CLI,
    **options: Any,
) -> subprocess.Popen[str]:
    """`rlm-desktop *args` (or `python -m module *args`) started, isolated in `home`.

    The caller picks the pipes (`stdout=subprocess.PIPE`, ...); output is text.
    """
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env=isolated_env(home, env),
        text=True,
        **options,
    )


_MEASURED = """
import json, os, subprocess, sys, time
result, limit, command = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
child = subprocess.Popen(command)
deadline = time.monotonic() + limit
while True:
    reaped, status, usage = os.wait4(child.pid, os.WNOHANG)
    if reaped == child.pid:
        break
    if time.monotonic() > deadline:
        child.kill()
        reaped, status, usage = os.wait4(child.pid, 0)
        break
    time.sleep(0.05)
with open(result, "w") as file:
    json.dump([os.waitstatus_to_exitcode(status), usage.ru_maxrss], file)
"""


def run_cli_measured(
    *args: str, home: Path, result: Path, limit_s: float = 120, **options: Any
) -> tuple[int, int]:
    """`rlm-desktop *args` run to its end (killed after `limit_s`); its exit code and its own
    peak resident memory in KB. It is started by a small launcher, as a grandchild: Linux carries
    the peak RSS of the image a process replaces into its `ru_maxrss`, so one started straight
    from a grown test runner would report the runner's peak (`result` is the launcher's file)."""
    command = [sys.executable, "-m", CLI, *args]
    subprocess.run(
        [sys.executable, "-c", _MEASURED, str(result), str(limit_s), *command],
        cwd=ROOT, env=isolated_env(home), text=True, check=True, **options,
    )  # fmt: skip
    code, peak_kb = json.loads(result.read_text())
    return int(code), int(peak_kb)


def interrupt_once(
    process: subprocess.Popen[str], ready: Callable[[], object], what: str, wait_s: float = 30
) -> tuple[str, str]:
    """Send `process` (started with pipes) Ctrl-C's SIGINT once `ready()` holds; its stdout and
    stderr once it ended. Fails, naming `what`, when it ends first or `ready` takes too long."""
    deadline = time.monotonic() + wait_s
    while not ready():
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    return process.communicate(timeout=15)


def _drop_file_override() -> None:
    """In the child, before exec: give up root's power to read any file (chmod 000 then counts)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def unprivileged() -> dict[str, Any]:
    """Subprocess options that make file permissions bind a child of a root test process.

    Root reads any file whatever its mode. The child keeps root's uid, so it still reaches the
    test's own folders (pytest keeps them private to their owner, and the interpreter may live
    in a folder only root can enter, so running as `nobody` is not an option), but it loses the
    two capabilities that override file modes: a chmod-000 file is then unreadable to it.
    """
    return {"preexec_fn": _drop_file_override} if is_root() else {}


def is_root() -> bool:
    """True when this process runs as root (whom file modes do not stop)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0
