"""Which sandbox serves a run's REPL workers: `auto`, `kernel` or `wasm`, as the user chose.

`kernel` is the OS's own confinement around real CPython (launcher.py: Linux namespaces,
Landlock, seccomp and cgroups; macOS Seatbelt); `wasm` a WebAssembly Python in a portable host
process (wasm/), the same everywhere. `auto` takes the kernel sandbox where the OS gives one
and the wasm sandbox elsewhere (Windows).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from rlm_desktop import portability
from rlm_desktop.engine.config import SANDBOX_CHOICES, ConfigError
from rlm_desktop.engine.sandbox.connection import WorkerLauncher

Backend = Literal["kernel", "wasm"]
KERNEL_PLATFORMS = ("linux", "darwin")
"""Where the OS gives model code a sandbox of its own (see launcher.py)."""


def kernel_available(platform: str = sys.platform) -> bool:
    """True where the kernel sandbox exists (never when the portable paths are forced:
    portability.py, so that `auto` takes the wasm sandbox as on Windows)."""
    return platform.startswith(KERNEL_PLATFORMS) and not portability.forced()


def backend_for(choice: str, platform: str = sys.platform) -> Backend:
    """The backend `choice` takes on `platform`; `ConfigError` (setting `sandbox`) when it
    cannot be had there."""
    if choice not in SANDBOX_CHOICES:
        raise ConfigError(f"{choice!r} is unknown: use auto, kernel or wasm", "sandbox")
    if choice == "wasm":
        return "wasm"
    if kernel_available(platform):
        return "kernel"
    if choice == "kernel":
        raise ConfigError(
            "kernel: this system gives model code no kernel sandbox (Linux and macOS do); "
            "use wasm or auto",
            "sandbox",
        )
    return "wasm"


def make_launcher(
    backend: Backend,
    scratch_dir: Path,
    output_cap_chars: int,
    *,
    compiled_dir: Path,
    allow_read: Sequence[str],
    max_tasks: int,
    memory_limit_mb: int | None,
    scratch_quota_mb: int,
    on_over_quota: Callable[[str], None],
) -> WorkerLauncher:
    """The launcher of `backend` for one run."""
    if backend == "wasm":
        from rlm_desktop.engine.sandbox.wasm.launcher import WasmLauncher

        return WasmLauncher(
            scratch_dir,
            output_cap_chars,
            cache_dir=compiled_dir,
            allow_read=allow_read,
            memory_limit_mb=memory_limit_mb,
            scratch_quota_mb=scratch_quota_mb,
            on_over_quota=on_over_quota,
        )
    from rlm_desktop.engine.sandbox.kernel.launcher import Launcher

    return Launcher(
        scratch_dir,
        output_cap_chars,
        allow_read=allow_read,
        max_tasks=max_tasks,
        memory_limit_mb=memory_limit_mb,
        scratch_quota_mb=scratch_quota_mb,
        on_over_quota=on_over_quota,
    )
