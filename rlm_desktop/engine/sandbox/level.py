"""The sandbox a run's REPL workers get: what the app asks for, and the level the kernel granted."""

from __future__ import annotations

import site
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop.engine.config import DEFAULT_MAX_TASKS, DEFAULT_SCRATCH_QUOTA_MB, ConfigError

MIB = 2**20
SCRATCH_FILES = 100_000
"""The most files and folders model code may make in a run's scratch folder."""
WASM_LEVEL = "wasm"
"""How the wasm sandbox's level begins (`wasm+wasmtime51.0.0`)."""
NOT_USED = "unused"
"""The level reported by a run that never started a REPL (a direct answer)."""


def shown_level(level: str | None) -> str:
    """The sandbox a run's model code ran under, e.g. "landlock+netns+pidns"; "" when the run
    ran no model code (a direct answer) or was saved before the level was kept."""
    return "" if not level or level == NOT_USED else level


@dataclass(frozen=True)
class SandboxReport:
    """What the launcher set up: `level` like `landlock+netns+pidns`, and what it isolates."""

    level: str
    filesystem: bool
    network: bool
    processes: bool = False
    shared_bounds: bool = False
    """True when one cgroup bounds the memory and tasks of all the run's processes together."""
    scratch_in_memory: bool = False
    """True when the scratch folder is a file system of the run's own, in memory, of its quota
    (else the app checks the folder on disk: scratch_quota.py)."""

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> SandboxReport:
        return cls(
            level=str(message.get("level", "none")),
            filesystem=bool(message.get("filesystem")),
            network=bool(message.get("network")),
            processes=bool(message.get("processes")),
            shared_bounds=bool(message.get("shared_bounds")),
            scratch_in_memory=bool(message.get("scratch_in_memory")),
        )

    @property
    def isolated(self) -> bool:
        """True when model code can neither read outside its openings nor reach the network."""
        return self.filesystem and self.network

    def describe(self) -> str:
        """What the sandbox lets model code do, in one sentence, naming what is missing."""
        if self.level.startswith(WASM_LEVEL):
            return (
                f"Model code runs in a WebAssembly Python ({self.level}) — it sees only its "
                "scratch folder (on disk, checked against its quota) and the folders you open, "
                "read-only; no network; it can start no process; its memory is bounded per REPL "
                "and for the run's REPLs together."
            )
        kernel = self.filesystem or self.network or self.processes
        opening = (
            f"Model code runs in a sandbox: {self.level}"
            if kernel
            else f"Model code runs in a process of its own, with no kernel sandbox ({self.level})"
        )
        scratch = (
            " (in memory, up to its quota, gone with the run)"
            if self.scratch_in_memory
            else " (on disk, checked against its quota)"
        )
        files = (
            "reads only Python, its packages and the folders you open; writes only its scratch "
            f"folder{scratch}"
            if self.filesystem
            else "it can read and write every file your account can"
        )
        network = "no network" if self.network else "it can reach the network"
        processes = (
            "all its processes end with the run"
            if self.processes
            else "processes it starts in the background can outlive the run"
        )
        memory = (
            "its processes share one memory bound"
            if self.shared_bounds
            else "memory is bounded per process"
        )
        return f"{opening} — {files}; {network}; {processes}; {memory}."


def python_folders() -> list[str]:
    """What the worker's interpreter reads: its prefixes, site-packages and this folder."""
    folders = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        *site.getsitepackages(),
        str(Path(__file__).resolve().parent),
    }
    return sorted(folders)


def sandbox_spec(
    scratch_dir: Path,
    allow_read: Sequence[str],
    max_tasks: int = DEFAULT_MAX_TASKS,
    cgroup_procs: Sequence[str] = (),
    scratch_bytes: int = DEFAULT_SCRATCH_QUOTA_MB * MIB,
) -> dict[str, Any]:
    """The request the launcher confines itself by (see confine.py)."""
    return {
        "read": python_folders(),
        "allow_read": [str(Path(p).expanduser().resolve()) for p in allow_read],
        "write": str(scratch_dir.resolve()),
        "scratch_bytes": scratch_bytes,
        "scratch_files": SCRATCH_FILES,
        "max_tasks": max_tasks,
        "cgroup_procs": list(cgroup_procs),
    }


def refuse_unless_isolated(report: SandboxReport) -> None:
    """Raise `ConfigError` (on `require_isolation`) unless `report` isolates the filesystem and
    the network, naming what is missing."""
    missing = [
        name
        for name, held in (("filesystem", report.filesystem), ("network", report.network))
        if not held
    ]
    if missing:
        raise ConfigError(
            f"is set but this system's sandbox ({report.level}) does not isolate the "
            f"{' or the '.join(missing)}; model code was not run",
            "require_isolation",
        )
