"""Asking this machine what the sandbox a run would take gives model code: a real launcher of
that backend, started in a folder of its own, reports its level, then ends."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from rlm_desktop import paths

if TYPE_CHECKING:
    from rlm_desktop.engine.sandbox.choice import Backend
    from rlm_desktop.engine.sandbox.level import SandboxReport


async def probe_backend(backend: Backend) -> SandboxReport:
    """The sandbox `backend` gives model code here (the kernel's in ~40 ms; the WebAssembly
    host's in about a second, longer when it must compile its guest first). Raises OSError or
    WorkerDied when it cannot start."""
    from rlm_desktop.engine.sandbox.kernel.launcher import probe_sandbox

    if backend == "kernel":
        return await probe_sandbox(paths.scratch_root())
    from rlm_desktop.engine.sandbox.wasm.launcher import WasmLauncher

    with tempfile.TemporaryDirectory(prefix="probe-", dir=paths.scratch_root()) as folder:
        launcher = WasmLauncher(Path(folder), 1000, cache_dir=paths.compiled_root())
        try:
            return await launcher.start()
        finally:
            await launcher.close()
