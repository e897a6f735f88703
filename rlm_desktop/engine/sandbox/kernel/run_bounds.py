"""One memory bound and one task bound for all of a run's processes: a cgroup made for the run.

A resource limit (`RLIMIT_AS`, `RLIMIT_NPROC`) holds per process, or per user and not for root:
model code that forks eight children touching 1.5 GB each takes 12 GB under a "4 GiB" limit. A
cgroup holds every process of the run together, whoever forks them, root included. The app makes
one per launcher, where the system lets it:
- cgroup v2, beside the app's own cgroup where that parent is ours to write and hands down the
  `memory` and `pids` controllers (a desktop session's systemd delegates the user's tree to the
  user; a container's root cgroup is root's);
- cgroup v1, where the `memory` and `pids` hierarchies are writable (root on a v1 system).
The launcher moves itself in (`cgroup.procs`) before it forks anything. Where neither is
possible the launcher falls back on limits that still hold together (confine.py): the PID
namespace's pid range caps tasks for root too, and model code may not start processes, so forks
cannot multiply the per-process memory limit.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PREFIX = "rlm-desktop-"
_NAME = re.compile(rf"{PREFIX}(\d+)-\d+")
_COUNTER = itertools.count(1)
REMOVE_WAIT_S = 5.0
_REMOVE_PAUSE_S = 0.01


@dataclass(frozen=True)
class SharedBounds:
    """The cgroup (v2) or cgroups (v1 memory and pids) a run's launcher joins."""

    kind: str
    """"cgroup2" or "cgroup1"."""
    folders: tuple[Path, ...]
    memory_bytes: int | None
    """None: tasks only, memory unbounded."""
    max_tasks: int

    @property
    def procs_files(self) -> list[str]:
        """The `cgroup.procs` files the launcher writes itself into."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def remove(self) -> None:
        """Kill what is left in the cgroups and remove them. Killed processes take a moment to
        leave a cgroup (a PID namespace is torn down after its PID 1 ends), so this waits up
        to `REMOVE_WAIT_S`, killing stragglers; run it off the event loop."""
        deadline = time.monotonic() + REMOVE_WAIT_S
        for folder in self.folders:
            with contextlib.suppress(OSError):
                (folder / "cgroup.kill").write_text("1")
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    _kill_members(folder)
                    time.sleep(_REMOVE_PAUSE_S)


def _kill_members(folder: Path) -> None:
    """SIGKILL the processes still in a cgroup (v1 has no `cgroup.kill`)."""
    with contextlib.suppress(OSError):
        for line in (folder / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(line), signal.SIGKILL)


@dataclass(frozen=True)
class _Hierarchy:
    version: int
    controllers: frozenset[str]
    folder: Path
    """The app's own cgroup in this hierarchy."""


def _own_cgroups() -> dict[str, str]:
    """The app's cgroup path per hierarchy: "" for v2, the controller list (e.g. "memory") for v1."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            parts = line.split(":", 2)
            if len(parts) == 3:
                found[parts[1]] = parts[2]
    return found


def hierarchies() -> list[_Hierarchy]:
    """The cgroup hierarchies this process sees, with its own cgroup in each (mountinfo)."""
    own = _own_cgroups()
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
                continue
            root, mount_point = _unescape(fields[3]), _unescape(fields[4])
            if tail[0] == "cgroup2":
                version, key, controllers = 2, "", frozenset[str]()
            else:
                names = [o for o in tail[2].split(",") if o in ("memory", "pids")]
                if not names:
                    continue
                version, controllers = 1, frozenset(names)
                key = next((k for k in own if set(names) <= set(k.split(","))), "")
            path = own.get(key)
            if path is None or not path.startswith(root):
                continue
            relative = path[len(root) :].lstrip("/")
            found.append(_Hierarchy(version, controllers, Path(mount_point, relative)))
    return found


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _new_folder(parent: Path) -> Path:
    _remove_stale(parent)
    folder = parent / f"{PREFIX}{os.getpid()}-{next(_COUNTER)}"
    folder.mkdir()
    return folder


def _remove_stale(parent: Path) -> None:
    """Remove empty run cgroups that an app which is gone left behind (it was killed)."""
    import psutil
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            match = _NAME.fullmatch(entry.name)
            if match and not psutil.pid_exists(int(match.group(1))):
                with contextlib.suppress(OSError):
                    entry.rmdir()


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK) and os.access(folder / "cgroup.procs", os.W_OK)


def _v2_parent(own: Path) -> Path | None:
    """Where a v2 run cgroup can go: under the app's own cgroup when that is the hierarchy's root,
    else beside it (a cgroup holding processes cannot hand controllers to children)."""
    parent = own if not (own / "cgroup.type").exists() else own.parent
    try:
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
    except OSError:
        return None
    return parent if {"memory", "pids"} <= enabled and _writable(parent) else None


def _write(folder: Path, name: str, value: int | str) -> None:
    (folder / name).write_text(str(value))


def _make_v2(own: Path, memory_bytes: int | None, max_tasks: int) -> SharedBounds | None:
    parent = _v2_parent(own)
    if parent is None:
        return None
    folder = _new_folder(parent)
    bounds = SharedBounds("cgroup2", (folder,), memory_bytes, max_tasks)
    try:
        _write(folder, "memory.max", "max" if memory_bytes is None else memory_bytes)
        if (folder / "memory.swap.max").exists():
            _write(folder, "memory.swap.max", 0)
        _write(folder, "pids.max", max_tasks)
    except OSError:
        bounds.remove()
        return None
    return bounds


def _make_v1(
    memory: Path, pids: Path, memory_bytes: int | None, max_tasks: int
) -> SharedBounds | None:
    if not (_writable(memory) and _writable(pids)):
        return None
    folders: list[Path] = []
    try:
        folders += [_new_folder(memory), _new_folder(pids)]
        limit = -1 if memory_bytes is None else memory_bytes
        _write(folders[0], "memory.limit_in_bytes", limit)
        if (folders[0] / "memory.memsw.limit_in_bytes").exists():  # no swap beyond it either
            _write(folders[0], "memory.memsw.limit_in_bytes", limit)
        _write(folders[1], "pids.max", max_tasks)
    except OSError:
        SharedBounds("cgroup1", tuple(folders), memory_bytes, max_tasks).remove()
        return None
    return SharedBounds("cgroup1", tuple(folders), memory_bytes, max_tasks)


def make_shared_bounds(memory_bytes: int | None, max_tasks: int) -> SharedBounds | None:
    """A new cgroup for one run's processes, its limits set; None where the system gives none."""
    if not os.path.exists("/proc/self/cgroup"):
        return None
    found = hierarchies()
    v2 = next((h for h in found if h.version == 2), None)
    if v2 is not None:
        made = _make_v2(v2.folder, memory_bytes, max_tasks)
        if made is not None:
            return made
    memory = next((h for h in found if h.version == 1 and "memory" in h.controllers), None)
    pids = next((h for h in found if h.version == 1 and "pids" in h.controllers), None)
    if memory is not None and pids is not None:
        return _make_v1(memory.folder, pids.folder, memory_bytes, max_tasks)
    return None
