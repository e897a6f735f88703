"""The kernel sandbox of the REPL workers (Linux): namespaces, a task cap and Landlock.

Standard library only, loaded by worker.py from its own folder (`python -I` drops the script's
folder from sys.path). The launcher confines itself once, before any model code runs, so every
worker it forks inherits the sandbox and cannot lift it; each worker then adds a narrower Landlock
layer of its own (Landlock layers stack: a process can only narrow what it may do).

What the launcher sets up, each piece falling back cleanly where the kernel lacks it:
- a new user namespace holding a network namespace (no interface but a down loopback: no network
  at all; already-open Unix sockets keep working), an IPC namespace (System V shared memory and
  queues of its own, gone with the run) and a PID namespace whose PID 1 is the launcher,
  so killing the launcher kills every process of the run, `setsid` and double-forked ones included;
- one memory bound and one task bound for all the run's processes: the cgroup the app made for the
  run (run_bounds.py), joined before anything else; and a task cap that holds without it, root
  included: RLIMIT_NPROC (the kernel exempts root) and the PID namespace's own pid range
  (`pid_max`, Linux 6.14+, with `ns_last_pid`); where no cgroup holds, workers start no process;
- a mount namespace whose every mount is read-only but the run's scratch folder (mounts.py): no
  `chmod`, `chown`, `utime` or extended attribute outside scratch, which Landlock does not govern;
  scratch itself a tmpfs of the run's quota, so model code's files never reach the disk;
- Landlock: read (and execute) Python and the system libraries, read what the user opened, write
  only the run's scratch folder; no TCP connect or bind (ABI 4+); no signals to, and no abstract
  Unix sockets of, processes outside the sandbox (ABI 6+);
- seccomp (seccomp.py): no socket but IP and netlink (no Unix socket or vsock), no io_uring, no
  keyrings, no mounts or namespaces, no file watches, no extended attributes read by path; and
  what a missing namespace or view leaves open (metadata changes, System V IPC, UDP).

On macOS the app starts the launcher under a Seatbelt profile (seatbelt.py) with the same policy;
the launcher reports `sandbox-exec` once the kernel confirms it. Elsewhere the level is
`process-only`: a process of its own with a clean environment and resource limits, no more.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import resource
import signal
import struct
import sys
from typing import Any

SYSTEM_READ = (
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/mime.types",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/sys/devices/system/cpu",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
)
DEVICES_READ_WRITE = ("/dev/null",)

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PID_MAX_MIN = 301
RESERVED_PIDS = 300

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REFER = 1 << 13
FS_TRUNCATE = 1 << 14
FS_ABI1 = (1 << 13) - 1
FS_FILE_ONLY = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE
FS_READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def load_libc() -> Any:
    """The C library, its errors kept in errno and `syscall` returning a long."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is missing or disabled."""
    if not sys.platform.startswith("linux"):
        return 0
    result = load_libc().syscall(
        SYS_LANDLOCK_CREATE_RULESET,
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION),
    )
    return max(int(result), 0)


def _handled_fs(abi: int) -> int:
    return FS_ABI1 | (FS_REFER if abi >= 2 else 0) | (FS_TRUNCATE if abi >= 3 else 0)


def restrict(read: list[str], read_write: list[str], write: list[str]) -> int:
    """Add one Landlock layer: `read` readable, `read_write` devices, `write` fully writable.

    Returns the ABI used (0: Landlock unavailable, nothing done). Raises OSError if it fails half way.
    """
    abi = landlock_abi()
    if abi < 1:
        return 0
    libc = load_libc()
    handled_fs = _handled_fs(abi)
    fields = [handled_fs]
    if abi >= 4:
        fields.append(NET_BIND_TCP | NET_CONNECT_TCP)
    if abi >= 6:
        fields.append(SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    attr = ctypes.create_string_buffer(struct.pack(f"={len(fields)}Q", *fields))
    ruleset = libc.syscall(
        SYS_LANDLOCK_CREATE_RULESET, attr, ctypes.c_size_t(len(attr.raw)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        groups = (
            (read, FS_READ),
            (read_write, FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE),
            (write, handled_fs & ~FS_EXECUTE),
        )
        for paths, access in groups:
            for path in paths:
                _add_path(libc, ruleset, path, access & handled_fs)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


def _add_path(libc: Any, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path this system does not have
    try:
        if not os.path.isdir(path):
            access &= FS_FILE_ONLY
        rule = _PathBeneath(allowed_access=access, parent_fd=fd)
        if (
            libc.syscall(
                SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0
            )
            != 0
        ):
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)


def _write(path: str, text: str) -> None:
    with open(path, "w") as file:
        file.write(text)


def _enter_namespaces(libc: Any, keep_fd: int) -> list[str]:
    """Unshare user + network (+ PID) namespaces; with a PID namespace, fork and become its PID 1.

    The original process stays outside as a plain waiter (it closes `keep_fd`, the control socket,
    so that the app sees the end of the launcher when PID 1 ends) and exits with PID 1's status.
    """
    uid, gid = os.getuid(), os.getgid()
    every = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC
    options = (
        (every | CLONE_NEWPID | CLONE_NEWNS, ["netns", "ipcns", "pidns", "mntns"]),
        (every | CLONE_NEWPID, ["netns", "ipcns", "pidns"]),
        (every, ["netns", "ipcns"]),
    )
    pieces = next((names for flags, names in options if libc.unshare(flags) == 0), [])
    if not pieces:
        return []
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError:
        pass  # ids stay unmapped (nobody); the namespaces still hold
    if "pidns" not in pieces:
        return pieces
    pid = os.fork()
    if pid == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        return pieces
    os.close(keep_fd)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            status = 0
            break
        except InterruptedError:
            continue
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF if status else 0)


def _cap_tasks(max_tasks: int, in_pidns: bool) -> bool:
    """Cap the tasks (processes and threads) of the sandbox; True when a cap holds even for root.

    RLIMIT_NPROC does not hold for root. In the PID namespace (this process is its PID 1) the
    kernel hands out pids below `pid_max`, and once its cursor has passed RESERVED_PIDS only from
    there up: moving the cursor there now (`ns_last_pid`, Linux 3.3+) and setting `pid_max`
    (per namespace since Linux 6.14) leaves exactly `max_tasks` pids, this one included.
    """
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NPROC, (max_tasks, max_tasks))
    if not in_pidns:
        return os.getuid() != 0
    try:
        _write("/proc/sys/kernel/pid_max", str(max(PID_MAX_MIN, RESERVED_PIDS + max_tasks - 1)))
        _write("/proc/sys/kernel/ns_last_pid", str(RESERVED_PIDS - 1))
        return True
    except OSError:
        return os.getuid() != 0


def _join_cgroups(procs_files: list[str]) -> bool:
    """Move this process into the run's cgroups (run_bounds.py) before it forks anything; True
    when it is in all of them."""
    joined = bool(procs_files)
    for path in procs_files:
        try:
            _write(path, "0")
        except OSError:
            joined = False
    return joined


@functools.cache
def _sibling(name: str) -> Any:
    """A module of this folder, loaded by path (the launcher runs with `python -I -S`)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"rlm_worker_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while they are made
    spec.loader.exec_module(module)
    return module


def _read_only_view(libc: Any, pieces: list[str], spec: dict[str, Any]) -> tuple[bool, bool]:
    """In the launcher's mount namespace, everything read-only but the run's scratch folder, a
    tmpfs of its quota where the kernel allows (mounts.py). Returns whether the view holds and
    whether scratch is in memory. Where the view cannot be set up, the namespace is dropped from
    `pieces`."""
    if "mntns" not in pieces:
        return False, False
    mounts = _sibling("mounts")
    quota = spec.get("scratch_bytes")
    try:
        in_memory = mounts.read_only_except(
            libc, spec["write"], quota, int(spec.get("scratch_files", 0))
        )
    except mounts.ReadOnlyFailed:
        pieces.remove("mntns")
        return False, False
    return True, bool(in_memory)


def drop_capabilities(libc: Any) -> None:
    """Drop the capabilities a new user namespace grants its first process."""
    header = struct.pack("=Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = bytes(24)  # two {effective, permitted, inheritable} sets, all empty
    libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data))


def python_read_paths(spec: dict[str, Any]) -> list[str]:
    return [*SYSTEM_READ, *spec.get("read", [])]


def seatbelt_holds(spec: dict[str, Any]) -> bool:
    """macOS: True when the app started this launcher under its Seatbelt profile (seatbelt.py)
    and the kernel confirms this process is sandboxed."""
    if sys.platform != "darwin" or spec.get("outer") != "sandbox-exec":
        return False
    try:
        check = ctypes.CDLL("/usr/lib/libSystem.dylib").sandbox_check
    except (OSError, AttributeError):
        return False
    check.restype = ctypes.c_int
    return bool(check(os.getpid(), None, 0) == 1)


def confine_launcher(spec: dict[str, Any], control_fd: int) -> dict[str, Any]:
    """Sandbox this launcher (and so every worker it forks); report what applied.

    `spec`: `read` (Python's folders), `allow_read` (what the user opened), `write` (the run's
    scratch folder), `scratch_bytes` and `scratch_files` (its quota), `max_tasks`,
    `cgroup_procs` (the run's cgroups to join, run_bounds.py).
    Returns {"level", "filesystem", "network", "processes", "shared_bounds",
    "scratch_in_memory"}.
    """
    pieces: list[str] = []
    network = processes = shared = in_memory = False
    if sys.platform.startswith("linux"):
        libc = load_libc()
        shared = _join_cgroups(list(spec.get("cgroup_procs", [])))
        pieces = _enter_namespaces(libc, control_fd)
        processes = _cap_tasks(int(spec.get("max_tasks", 256)), "pidns" in pieces)
        processes = processes and "pidns" in pieces
        read_only, in_memory = _read_only_view(libc, pieces, spec)
        drop_capabilities(libc)
        read = python_read_paths(spec) + list(spec.get("allow_read", [])) + ["/proc"]
        try:
            abi = restrict(read, list(DEVICES_READ_WRITE), [spec["write"]])
        except (OSError, KeyError):
            abi = 0  # a failed layer is never half applied: restrict_self is the last step
        if abi:
            pieces.insert(0, "landlock")
        seccomp = _sibling("seccomp")
        missing = seccomp.Missing(
            read_only_view=not read_only,
            ipc_namespace="ipcns" not in pieces,
            network_namespace="netns" not in pieces,
        )
        filtered = seccomp.install(libc, missing)
        if filtered:
            pieces.append("seccomp")
            _sibling("pipes")  # loaded once here: every worker forked from now has it
        if shared:
            pieces.append("cgroup")
        # Landlock governs TCP only; without a network namespace, the filter keeps IP to TCP.
        network = "netns" in pieces or (abi >= 4 and filtered)
    elif seatbelt_holds(spec):
        pieces, network = ["sandbox-exec"], True
    return {
        "level": "+".join(pieces) or "process-only",
        "filesystem": "landlock" in pieces or "sandbox-exec" in pieces,
        "network": network,
        "processes": processes,
        "shared_bounds": shared,
        "scratch_in_memory": in_memory,
    }


def confine_worker(report: dict[str, Any], spec: dict[str, Any], scratch: str) -> None:
    """Narrow a freshly forked worker: write only its own scratch folder, read only its own /proc;
    where seccomp refuses socket pairs, lend pipes for them (pipes.lend_pipes); where no cgroup
    bounds the run, start no process (each would have a memory limit of its own)."""
    pieces = str(report.get("level", "")).split("+")
    if "seccomp" in pieces:
        _sibling("pipes").lend_pipes()
        if "cgroup" not in pieces:
            _sibling("seccomp").forbid_processes(load_libc())
    if report.get("filesystem"):
        read = python_read_paths(spec) + list(spec.get("allow_read", [])) + ["/proc/self"]
        restrict(read, list(DEVICES_READ_WRITE), [scratch])
