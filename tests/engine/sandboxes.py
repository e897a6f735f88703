"""A launcher of either sandbox backend for the tests and benchmarks that drive workers directly."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rlm_desktop import paths
from rlm_desktop.engine.sandbox.choice import Backend, make_launcher
from rlm_desktop.engine.sandbox.connection import WorkerLauncher


def launcher_for(
    backend: str,
    folder: Path,
    output_cap_chars: int = 100_000,
    *,
    allow_read: Sequence[str] = (),
    memory_limit_mb: int = 512,
    max_tasks: int = 64,
    scratch_quota_mb: int = 64,
) -> WorkerLauncher:
    """`backend`'s launcher for a run whose scratch is `folder`, its guest compiled where the
    session keeps it."""
    chosen: Backend = "wasm" if backend == "wasm" else "kernel"
    return make_launcher(
        chosen,
        folder,
        output_cap_chars,
        compiled_dir=paths.compiled_root(),
        allow_read=allow_read,
        max_tasks=max_tasks,
        memory_limit_mb=memory_limit_mb,
        scratch_quota_mb=scratch_quota_mb,
        on_over_quota=lambda reason: None,
    )
