"""`rlm-desktop --self-check`: can this installation run? One line per check, exit 1 if any fails.

Checks what a first run needs, in the order it needs it: the packages import, the data folder is
writable, where API keys would be kept, litellm's price map is there, a REPL worker starts in the
sandbox and runs `print(1)`, the wasm sandbox is compiled for this machine and runs it too, the
documents' bounded reader starts in the sandbox this machine gives
it and reads a file, Qt's platform plugin loads (in a child process: a plugin that
fails to load aborts the process that tried), and whether Ray is there for `--ray`. A missing keyring is a warning, not a failure: keys
then come from environment variables or are kept for the session only.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlm_desktop.commands.options import QT_PROBE_FLAG
from rlm_desktop.formatting import terminal_safe

if TYPE_CHECKING:
    from rlm_desktop.engine.sandbox.choice import Backend
    from rlm_desktop.engine.sandbox.level import SandboxReport

PACKAGES = (
    "PySide6",
    "qasync",
    "sqlite_utils",
    "keyring",
    "pygments",
    "pypdfium2",
    "pypdf",
    "tiktoken",
    "rapidfuzz",
)
DISTRIBUTIONS = {"sqlite_utils": "sqlite-utils"}
WORKER_TIMEOUT_S = 30.0
QT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class CheckResult:
    """One line of the self-check: `state` is `ok`, `warn` or `FAIL`."""

    name: str
    state: str
    detail: str

    def line(self) -> str:
        return f"{self.state:<4}  {self.name}: {self.detail}"


def _ok(name: str, detail: str) -> CheckResult:
    return CheckResult(name, "ok", detail)


def _fail(name: str, detail: str) -> CheckResult:
    return CheckResult(name, "FAIL", detail)


def _version(package: str, module: Any) -> str:
    known = getattr(module, "__version__", None)
    if isinstance(known, str):
        return known
    try:
        return metadata.version(DISTRIBUTIONS.get(package, package))
    except metadata.PackageNotFoundError:
        return "(version unknown)"


def check_imports() -> CheckResult:
    """The packages the window and the engine import (litellm included: it takes seconds)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    found, missing = [], []
    for package in (*PACKAGES, "litellm"):
        try:
            module = importlib.import_module(package)
            found.append(f"{package} {_version(package, module)}")
        except Exception as error:
            missing.append(f"{package} ({type(error).__name__}: {error})")
    if missing:
        return _fail("imports", "cannot import " + "; ".join(missing))
    return _ok("imports", ", ".join(found))


def check_data_folder() -> CheckResult:
    """The data folder exists and a file can be written there (where the database lives)."""
    from rlm_desktop import paths

    try:
        folder = paths.data_dir()
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".self-check-"):
            pass
    except OSError as error:
        return _fail("data folder", f"not writable: {error}")
    return _ok("data folder", f"{folder} (writable; the database is {paths.database_path().name})")


def check_keyring() -> CheckResult:
    """Which keyring keeps API keys, and whether it keeps them encrypted."""
    from rlm_desktop.providers import keys

    described = keys.backend_description()
    if not keys.keyring_available():
        return CheckResult(
            "keyring",
            "warn",
            f"{described}; keys come from environment variables or last for the session only",
        )
    insecure = any(word in described for word in ("Plaintext", "plaintext", "Null", "Uncrypted"))
    security = "stores keys unencrypted" if insecure else "secure"
    return CheckResult("keyring", "warn" if insecure else "ok", f"{described}, {security}")


def check_price_map() -> CheckResult:
    """litellm's bundled price map (the app never fetches it over the network)."""
    from rlm_desktop.litellm_files import PRICE_MAP_FILE, bundled_price_map, litellm_package_dir

    try:
        models = bundled_price_map()
    except (OSError, ValueError) as error:
        return _fail("price map", f"unreadable: {error}")
    if not models:
        return _fail("price map", f"{PRICE_MAP_FILE} not found in litellm's package")
    return _ok("price map", f"{len(models):,} models ({litellm_package_dir()})")


async def _run_print_one(
    scratch: Path, backend: Backend
) -> tuple[str, SandboxReport | None]:
    from rlm_desktop import paths
    from rlm_desktop.engine.config import DEFAULT_MAX_TASKS, DEFAULT_SCRATCH_QUOTA_MB
    from rlm_desktop.engine.sandbox.choice import make_launcher
    from rlm_desktop.engine.sandbox.process import WorkerProcess

    async def no_sub_calls(operation: str, message: dict[str, Any]) -> Any:
        raise RuntimeError("the self-check makes no sub-calls")

    launcher = make_launcher(
        backend,
        scratch,
        10_000,
        compiled_dir=paths.compiled_root(),
        allow_read=(),
        max_tasks=DEFAULT_MAX_TASKS,
        memory_limit_mb=512,
        scratch_quota_mb=DEFAULT_SCRATCH_QUOTA_MB,
        on_over_quota=lambda reason: None,
    )
    worker = WorkerProcess(
        "",
        [],
        scratch_dir=scratch,
        memory_limit_mb=512,
        output_cap_chars=10_000,
        handler=no_sub_calls,
        launcher=launcher,
    )
    try:
        await worker.start()
        outcome = await worker.execute("print(1)", WORKER_TIMEOUT_S)
        return outcome.stdout + (outcome.error or ""), launcher.sandbox
    finally:
        await worker.close()
        await launcher.close()


def _print_one(backend: Backend, timeout_s: float) -> tuple[str, SandboxReport | None]:
    from rlm_desktop import paths

    with tempfile.TemporaryDirectory(prefix="self-check-", dir=paths.scratch_root()) as folder:
        return asyncio.run(asyncio.wait_for(_run_print_one(Path(folder), backend), timeout_s))


def check_worker() -> CheckResult:
    """A REPL worker starts in the kernel sandbox this machine gives and runs `print(1)`."""
    from rlm_desktop.engine.sandbox.choice import kernel_available

    if not kernel_available():
        return _ok("REPL worker", f"{sys.platform} gives no kernel sandbox: runs use wasm")
    try:
        printed, sandbox = _print_one("kernel", WORKER_TIMEOUT_S)
    except Exception as error:
        return _fail("REPL worker", f"did not start: {type(error).__name__}: {error}")
    if printed.strip() != "1":
        return _fail("REPL worker", f"print(1) gave {printed.strip()[-200:]!r}")
    if sandbox is None or not sandbox.isolated:
        described = sandbox.describe() if sandbox else "the sandbox level was not reported"
        return CheckResult("REPL worker", "warn", f"ran print(1); {described}")
    return _ok("REPL worker", f"ran print(1) in the sandbox {sandbox.level}")


def check_wasm() -> CheckResult:
    """The wasm sandbox is ready: its guest is there, compiled for this machine (now, once, if
    it was not), and runs `print(1)`."""
    from rlm_desktop import paths
    from rlm_desktop.engine.sandbox.choice import kernel_available
    from rlm_desktop.engine.sandbox.wasm.prepare import prepare

    role = "--sandbox wasm" if kernel_available() else "every run's sandbox here"
    try:
        compiled_s = prepare(paths.compiled_root())
        printed, sandbox = _print_one("wasm", WORKER_TIMEOUT_S)
    except Exception as error:
        return _fail("wasm sandbox", f"not ready ({role}): {type(error).__name__}: {error}")
    if printed.strip() != "1":
        return _fail("wasm sandbox", f"print(1) gave {printed.strip()[-200:]!r}")
    level = sandbox.level if sandbox else "wasm"
    compiled = f"; compiled for this machine in {compiled_s:.0f} s" if compiled_s else ""
    return _ok("wasm sandbox", f"ran print(1) in {level} ({role}){compiled}")


def check_reader() -> CheckResult:
    """The documents' bounded reader process starts, reads a file and says which sandbox it
    reads in (a hostile document's parser runs there)."""
    from rlm_desktop.documents.model import LoadOptions
    from rlm_desktop.documents.reader import BoundedReader
    from rlm_desktop.documents.reader_sandbox import described

    # This line says what the reader would otherwise log about its sandbox.
    logging.getLogger("rlm_desktop.documents.reader").disabled = True
    reader = BoundedReader(LoadOptions().max_read_memory_bytes)
    try:
        text = reader.read("text", b"self-check", WORKER_TIMEOUT_S).text
    except Exception as error:
        return _fail("document reader", f"did not read a file: {type(error).__name__}: {error}")
    finally:
        reader.close()
    if text != "self-check":
        return _fail("document reader", f"read {text[-200:]!r} from a file holding 'self-check'")
    if reader.sandbox is None:
        return CheckResult(
            "document reader",
            "warn",
            "no reader process could start: documents are read in "
            "the application's own process, without bounds or sandbox",
        )
    if not reader.sandbox.isolated:
        return CheckResult("document reader", "warn", described(reader.sandbox))
    return _ok("document reader", f"read a file in the sandbox {reader.sandbox.level}")


def _self_command() -> list[str]:
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "rlm_desktop"]


def check_qt() -> CheckResult:
    """Qt's platform plugin loads (in a child process, which a failing plugin aborts)."""
    try:
        probe = subprocess.run(
            [*_self_command(), QT_PROBE_FLAG],
            capture_output=True,
            text=True,
            timeout=QT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return _fail("Qt platform", f"the probe did not run: {error}")
    said = probe.stdout.strip()
    if probe.returncode != 0 or not said:
        lines = [line for line in probe.stderr.splitlines() if line.strip()]
        reason = next(
            (line for line in lines if "plugin" in line.lower()), lines[-1] if lines else ""
        )
        return _fail("Qt platform", reason or f"the probe exited with {probe.returncode}")
    return _ok("Qt platform", said)


def check_cluster() -> CheckResult:
    """Whether `eval --ray` and `batch --ray` can run here (Ray is an optional extra)."""
    try:
        version = metadata.version("ray")
    except metadata.PackageNotFoundError:
        return _ok("Ray", "not installed (optional: pip install 'rlm-desktop[cluster]' for --ray)")
    try:
        metadata.version("cryptography")
    except metadata.PackageNotFoundError:
        return _fail("Ray", f"{version} without cryptography: pip install 'rlm-desktop[cluster]'")
    return _ok("Ray", f"{version} (eval and batch --ray; each node needs the same rlm-desktop)")


CHECKS: tuple[Callable[[], CheckResult], ...] = (
    check_imports,
    check_data_folder,
    check_keyring,
    check_price_map,
    check_worker,
    check_wasm,
    check_reader,
    check_qt,
    check_cluster,
)


def self_check() -> int:
    """Run every check, print one line each; 1 when any failed."""
    from rlm_desktop import __version__

    print(f"rlm-desktop {__version__} (Python {sys.version.split()[0]}, {sys.platform})")
    failed = False
    for check in CHECKS:
        try:
            result = check()
        except Exception as error:
            result = _fail(
                check.__name__.removeprefix("check_"), f"{type(error).__name__}: {error}"
            )
        print(terminal_safe(result.line()), flush=True)  # errors and paths from the system
        failed = failed or result.state == "FAIL"
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    return 1 if failed else 0
