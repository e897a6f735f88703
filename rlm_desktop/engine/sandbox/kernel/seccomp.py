"""The seccomp filters of the REPL workers (Linux, x86_64 and aarch64): the system calls model code
is refused, each for a reason Landlock and the namespaces do not cover.

Standard library only, loaded by path by confine.py inside the launcher. The filter is a deny
list (analysis code needs most of the kernel) of calls that reach past the sandbox's other walls:
- sockets of any family but IP and netlink, and socket pairs: Landlock does not govern connecting
  to a Unix socket by path, and a network namespace does not separate Unix sockets or vsock
  (`AF_VSOCK` reaches a VM's host: WSL2, VMware, QEMU); a new Unix socket could reach the session
  bus (and the keyring behind it), the user's ssh-agent or a container engine, and a datagram pair
  can `sendto()` any socket path. Sockets already open (the worker's own channel) keep working.
  Where there is no network namespace, IP sockets are TCP only (Landlock governs TCP, not UDP).
- `io_uring_setup`, `io_uring_enter`, `io_uring_register`: io_uring opens sockets and files
  (`IORING_OP_SOCKET`, `IORING_OP_OPENAT`) without the system calls a filter sees.
- `add_key`, `request_key`, `keyctl`: the kernel keyrings the user's session shares with every
  process it starts.
- `mount` and its new-API family, `umount2`, `pivot_root`, `unshare`, `setns`, and `clone` with a
  namespace flag (`clone3`, whose flags a filter cannot read, answers ENOSYS, so the C library
  falls back on `clone`): model code keeps the read-only view of the file system (mounts.py) and
  gets no capabilities in a namespace of its own (they reach nf_tables, raw sockets, ...).
- `bpf`, `perf_event_open`, `userfaultfd`: kernel interfaces analysis code never needs, through
  which privilege escalations have gone.
- `inotify_*`, `fanotify_*`: a watch needs only a path, so it would name the files coming and going
  in folders model code may not list.
- `getxattr`, `listxattr` and their `l`/`at` forms (ENOTSUP, which copying code reads as "no
  attributes"): they need only a path, and an attribute can hold a secret (a download's URL with
  its token); the `f` forms work on what Landlock let model code open.
- where the read-only view could not be set up, the calls that change files' metadata (`chmod`,
  `chown`, `utime`, extended attributes and their variants), which Landlock does not govern;
- where there is no IPC namespace, System V shared memory, queues and semaphores: their ids are
  not paths, so another process's segment would be open to model code;
- where no cgroup bounds the run's memory as a whole (run_bounds.py), new processes, in a second
  filter of the workers' own: each would get a memory limit of its own.
Calls of other ABIs (x32, i386) are refused outright: the rules name the native numbers only.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_STREAM, SOCK_TYPE_MASK, IPPROTO_TCP = 1, 0xF, 6
CLONE_THREAD = 0x00010000
CLONE_NAMESPACES = 0x7E020000
"""CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID and
CLONE_NEWNET."""

# Numbers from 403 up are the same on every architecture.
_COMMON = {
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "mount_setattr": 442,
    "fchmodat2": 452,
    "setxattrat": 463,
    "getxattrat": 464,
    "listxattrat": 465,
    "removexattrat": 466,
    "open_tree_attr": 467,
    "file_setattr": 469,
}
NUMBERS: dict[str, dict[str, int]] = {
    "x86_64": {
        **_COMMON,
        "shmget": 29, "shmat": 30, "shmctl": 31, "socket": 41, "socketpair": 53, "clone": 56,
        "fork": 57, "vfork": 58, "semget": 64, "semop": 65, "semctl": 66, "shmdt": 67,
        "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "chmod": 90, "fchmod": 91,
        "chown": 92, "fchown": 93, "lchown": 94, "utime": 132, "pivot_root": 155, "mount": 165,
        "umount2": 166, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "getxattr": 191,
        "lgetxattr": 192, "listxattr": 194, "llistxattr": 195, "removexattr": 197,
        "lremovexattr": 198, "fremovexattr": 199, "semtimedop": 220, "utimes": 235,
        "add_key": 248, "request_key": 249, "keyctl": 250, "inotify_init": 253,
        "inotify_add_watch": 254, "fchownat": 260, "futimesat": 261, "fchmodat": 268,
        "unshare": 272, "utimensat": 280, "inotify_init1": 294, "perf_event_open": 298,
        "fanotify_init": 300, "fanotify_mark": 301, "setns": 308, "bpf": 321, "userfaultfd": 323,
    },
    "aarch64": {
        **_COMMON,
        "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "getxattr": 8, "lgetxattr": 9,
        "listxattr": 11, "llistxattr": 12, "removexattr": 14, "lremovexattr": 15,
        "fremovexattr": 16, "inotify_init1": 26, "inotify_add_watch": 27, "umount2": 39,
        "mount": 40, "pivot_root": 41, "fchmod": 52, "fchmodat": 53, "fchownat": 54,
        "fchown": 55, "utimensat": 88, "unshare": 97, "msgget": 186, "msgctl": 187,
        "msgrcv": 188, "msgsnd": 189, "semget": 190, "semctl": 191, "semtimedop": 192,
        "semop": 193, "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197, "socket": 198,
        "socketpair": 199, "add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220,
        "perf_event_open": 241, "fanotify_init": 262, "fanotify_mark": 263, "setns": 268,
        "bpf": 280, "userfaultfd": 282,
    },
}  # fmt: skip

ALWAYS = {
    **dict.fromkeys(("io_uring_setup", "io_uring_enter", "io_uring_register"), errno.ENOSYS),
    **dict.fromkeys(("add_key", "request_key", "keyctl"), errno.EPERM),
    **dict.fromkeys(
        ("mount", "umount2", "pivot_root", "open_tree", "open_tree_attr", "move_mount", "fsopen",
         "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns"),
        errno.EPERM,
    ),  # fmt: skip
    "clone3": errno.ENOSYS,
    **dict.fromkeys(("bpf", "perf_event_open", "userfaultfd"), errno.EPERM),
    **dict.fromkeys(
        ("inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark"),
        errno.ENOSYS,
    ),
    **dict.fromkeys(
        ("getxattr", "lgetxattr", "listxattr", "llistxattr", "getxattrat", "listxattrat"),
        errno.ENOTSUP,
    ),
    "socketpair": errno.EACCES,
}
"""Refused whatever their arguments, with the error the caller gets."""
METADATA = (
    "chmod", "fchmod", "fchmodat", "fchmodat2",
    "chown", "fchown", "lchown", "fchownat",
    "utime", "utimes", "futimesat", "utimensat",
    "setxattr", "lsetxattr", "fsetxattr", "setxattrat",
    "removexattr", "lremovexattr", "fremovexattr", "removexattrat",
    "file_setattr",
)  # fmt: skip
"""Refused (EPERM) only where the file system could not be made read-only outside scratch."""
SYSTEM_V_IPC = (
    "shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl",
)  # fmt: skip
"""Refused (EPERM) only where the sandbox has no IPC namespace of its own."""


@dataclass(frozen=True)
class Missing:
    """Walls the other pieces could not put up, which the filter then makes up for."""

    read_only_view: bool = False
    ipc_namespace: bool = False
    network_namespace: bool = False


PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
_LD_W_ABS, _ALU_AND_K, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x54, 0x15, 0x35, 0x45, 0x06
_ARCH, _NR = 4, 0


def _arg(index: int) -> int:
    """Where the low word of argument `index` is in `seccomp_data` (little-endian)."""
    return 16 + 8 * index


Line = tuple[int, Any, Any, int]
"""An instruction whose jump targets may still be labels (str); see `_assemble`."""


def _assemble(lines: Iterable[Line | str]) -> list[tuple[int, int, int, int]]:
    """BPF instructions from `lines`, where a str is a label and a jump may name one."""
    code: list[Line] = []
    labels: dict[str, int] = {}
    for line in lines:
        if isinstance(line, str):
            labels[line] = len(code)
        else:
            code.append(line)

    def offset(target: Any, at: int) -> int:
        if isinstance(target, int):
            return target
        jump = labels[target] - at - 1
        if not 0 <= jump <= 255:
            raise ValueError(f"jump to {target} out of range")
        return jump

    return [(op, offset(jt, at), offset(jf, at), k) for at, (op, jt, jf, k) in enumerate(code)]


def _refuse(code: int) -> Line:
    return (_RET_K, 0, 0, SECCOMP_RET_ERRNO | code)


_ALLOW: Line = (_RET_K, 0, 0, SECCOMP_RET_ALLOW)


def _header(machine: str) -> list[Line | str]:
    return [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 0, "foreign", AUDIT_ARCH[machine]),
        (_LD_W_ABS, 0, 0, _NR),
        (_JGE_K, "foreign", 0, X32_SYSCALL_BIT),
    ]


_FOOTER: list[Line | str] = [_ALLOW, "foreign", _refuse(errno.ENOSYS)]


def _socket_rule(numbers: dict[str, int], tcp_only: bool) -> list[Line | str]:
    """`socket`: IP (TCP only when `tcp_only`) and netlink; AF_UNIX EACCES; any other family
    EAFNOSUPPORT, as if the kernel had none."""
    inet = "inet" if tcp_only else "allow socket"
    return [
        (_JEQ_K, 0, "after socket", numbers["socket"]),
        (_LD_W_ABS, 0, 0, _arg(0)),
        (_JEQ_K, "refuse unix", 0, AF_UNIX),
        (_JEQ_K, inet, 0, AF_INET),
        (_JEQ_K, inet, 0, AF_INET6),
        (_JEQ_K, "allow socket", 0, AF_NETLINK),
        _refuse(errno.EAFNOSUPPORT),
        "refuse unix",
        _refuse(errno.EACCES),
        "inet",
        (_LD_W_ABS, 0, 0, _arg(1)),
        (_ALU_AND_K, 0, 0, SOCK_TYPE_MASK),  # without SOCK_NONBLOCK and SOCK_CLOEXEC
        (_JEQ_K, 0, "refuse ip", SOCK_STREAM),
        (_LD_W_ABS, 0, 0, _arg(2)),
        (_JEQ_K, "allow socket", 0, 0),
        (_JEQ_K, "allow socket", 0, IPPROTO_TCP),
        "refuse ip",
        _refuse(errno.EACCES),
        "allow socket",
        _ALLOW,
        "after socket",
    ]


def _clone_rule(numbers: dict[str, int], mask: int, code: int, allow_when: bool) -> list[Line | str]:
    """`clone` refused with `code` when its flags have (`allow_when` False) or lack (True) a bit
    of `mask`."""
    refused, allowed = ("refuse clone", "after clone")
    set_target, clear_target = (allowed, refused) if allow_when else (refused, allowed)
    return [
        (_JEQ_K, 0, "after clone", numbers["clone"]),
        (_LD_W_ABS, 0, 0, _arg(0)),
        (_JSET_K, set_target, clear_target, mask),
        "refuse clone",
        _refuse(code),
        "after clone",
        (_LD_W_ABS, 0, 0, _NR),
    ]


def program(machine: str, missing: Missing) -> list[tuple[int, int, int, int]]:
    """The main filter as BPF instructions (code, jt, jf, k), for what the sandbox `missing`."""
    numbers = NUMBERS[machine]
    refused = dict(ALWAYS)
    if missing.read_only_view:
        refused.update(dict.fromkeys(METADATA, errno.EPERM))
    if missing.ipc_namespace:
        refused.update(dict.fromkeys(SYSTEM_V_IPC, errno.EPERM))
    lines = _header(machine)
    lines += _socket_rule(numbers, tcp_only=missing.network_namespace)
    lines += _clone_rule(numbers, CLONE_NAMESPACES, errno.EPERM, allow_when=False)
    for name, code in refused.items():
        if name in numbers:  # an architecture without the old call (aarch64 has no chmod)
            lines += [(_JEQ_K, 0, 1, numbers[name]), _refuse(code)]
    return _assemble([*lines, *_FOOTER])


def process_program(machine: str) -> list[tuple[int, int, int, int]]:
    """A second filter, for workers where no cgroup bounds the run: no new process (threads
    are `clone` with CLONE_THREAD; the main filter already answers `clone3` ENOSYS)."""
    numbers = NUMBERS[machine]
    lines = _header(machine)
    for name in ("fork", "vfork"):
        if name in numbers:
            lines += [(_JEQ_K, 0, 1, numbers[name]), _refuse(errno.EPERM)]
    lines += _clone_rule(numbers, CLONE_THREAD, errno.EPERM, allow_when=True)
    return _assemble([*lines, *_FOOTER])


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _load(libc: Any, lines: list[tuple[int, int, int, int]]) -> bool:
    filters = (_SockFilter * len(lines))(*(_SockFilter(*line) for line in lines))
    fprog = _SockFprog(len(lines), filters)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return bool(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0)


def install(libc: Any, missing: Missing) -> bool:
    """Install the main filter on this process (inherited by every process it starts); False
    where this architecture has no rules or the kernel refused it."""
    machine = os.uname().machine
    return machine in NUMBERS and _load(libc, program(machine, missing))


def forbid_processes(libc: Any) -> bool:
    """Install `process_program` on this process (a worker, after the launcher forked it)."""
    machine = os.uname().machine
    return machine in NUMBERS and _load(libc, process_program(machine))
