"""The seccomp filter of the REPL workers (Linux, x86_64 and aarch64): the system calls model code
is refused, each for a reason Landlock and the namespaces do not cover.

Standard library only, loaded by path by confine.py inside the launcher. The filter is a deny
list (analysis code needs most of the kernel) of calls that reach past the sandbox's other walls:
- `socket(AF_UNIX, ...)` and `socketpair(AF_UNIX, ...)`, every type: Landlock does not govern
  connecting to a Unix socket by path, and a network namespace does not separate them, so a new
  one could reach the session bus (and the keyring behind it), the user's ssh-agent or a
  container engine; a datagram pair can `sendto()` any socket path. Sockets already open (the
  worker's own channel to the app) keep working.
- `io_uring_setup`, `io_uring_enter`, `io_uring_register`: io_uring opens sockets and files
  (`IORING_OP_SOCKET`, `IORING_OP_OPENAT`) without the system calls a filter sees.
- `add_key`, `request_key`, `keyctl`: the kernel keyrings the user's session shares with every
  process it starts.
- `mount` and its new-API family, `umount2`, `pivot_root`, `unshare`, `setns`: model code keeps
  the read-only view of the file system the launcher set up (mounts.py).
- `bpf`, `perf_event_open`, `userfaultfd`: kernel interfaces analysis code never needs, through
  which privilege escalations have gone.
- where the read-only view could not be set up, the calls that change files' metadata (`chmod`,
  `chown`, `utime`, extended attributes and their variants), which Landlock does not govern;
- where no cgroup bounds the run's memory as a whole (run_bounds.py), new processes, in a second
  filter of the workers' own: each would get a memory limit of its own.
Calls of other ABIs (x32, i386) are refused outright: the rules name the native numbers only.

Event loops (asyncio's among them) wake themselves through a socket pair; `lend_pipes` gives
model code a pipe in its place, so `asyncio.run` still works.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
from collections.abc import Callable
from typing import Any

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000
AF_UNIX = 1

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
    "mount_setattr": 442,
    "fchmodat2": 452,
    "setxattrat": 463,
    "removexattrat": 466,
    "open_tree_attr": 467,
    "file_setattr": 469,
}
NUMBERS: dict[str, dict[str, int]] = {
    "x86_64": {
        **_COMMON,
        "socket": 41,
        "socketpair": 53,
        "chmod": 90,
        "fchmod": 91,
        "chown": 92,
        "fchown": 93,
        "lchown": 94,
        "utime": 132,
        "pivot_root": 155,
        "mount": 165,
        "umount2": 166,
        "setxattr": 188,
        "lsetxattr": 189,
        "fsetxattr": 190,
        "removexattr": 197,
        "lremovexattr": 198,
        "fremovexattr": 199,
        "utimes": 235,
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "fchownat": 260,
        "futimesat": 261,
        "fchmodat": 268,
        "unshare": 272,
        "utimensat": 280,
        "perf_event_open": 298,
        "setns": 308,
        "bpf": 321,
        "userfaultfd": 323,
    },
    "aarch64": {
        **_COMMON,
        "setxattr": 5,
        "lsetxattr": 6,
        "fsetxattr": 7,
        "removexattr": 14,
        "lremovexattr": 15,
        "fremovexattr": 16,
        "umount2": 39,
        "mount": 40,
        "pivot_root": 41,
        "fchmod": 52,
        "fchmodat": 53,
        "fchownat": 54,
        "fchown": 55,
        "utimensat": 88,
        "unshare": 97,
        "socket": 198,
        "socketpair": 199,
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "perf_event_open": 241,
        "setns": 268,
        "bpf": 280,
        "userfaultfd": 282,
    },
}

UNIX_SOCKETS = ("socket", "socketpair")
"""Refused when their first argument, the address family, is AF_UNIX."""
ALWAYS = {
    "io_uring_setup": errno.ENOSYS,
    "io_uring_enter": errno.ENOSYS,
    "io_uring_register": errno.ENOSYS,
    "add_key": errno.EPERM,
    "request_key": errno.EPERM,
    "keyctl": errno.EPERM,
    "mount": errno.EPERM,
    "umount2": errno.EPERM,
    "pivot_root": errno.EPERM,
    "open_tree": errno.EPERM,
    "open_tree_attr": errno.EPERM,
    "move_mount": errno.EPERM,
    "fsopen": errno.EPERM,
    "fsconfig": errno.EPERM,
    "fsmount": errno.EPERM,
    "fspick": errno.EPERM,
    "mount_setattr": errno.EPERM,
    "unshare": errno.EPERM,
    "setns": errno.EPERM,
    "bpf": errno.EPERM,
    "perf_event_open": errno.EPERM,
    "userfaultfd": errno.EPERM,
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

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_ARCH_OFFSET, _NR_OFFSET, _ARG0_OFFSET = 4, 0, 16


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _refuse(code: int) -> tuple[int, int, int, int]:
    return (_RET_K, 0, 0, SECCOMP_RET_ERRNO | code)


def _wrapped(machine: str, body: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """`body` (which ends in a return) behind the architecture and ABI checks."""
    foreign = len(body) + 1  # from the architecture check to the ENOSYS after the body
    return [
        (_LD_W_ABS, 0, 0, _ARCH_OFFSET),
        (_JEQ_K, 0, foreign + 1, AUDIT_ARCH[machine]),
        (_LD_W_ABS, 0, 0, _NR_OFFSET),
        (_JGE_K, foreign - 1, 0, X32_SYSCALL_BIT),
        *body,
        _refuse(errno.ENOSYS),
    ]


def program(machine: str, metadata: bool) -> list[tuple[int, int, int, int]]:
    """The filter as BPF instructions (code, jt, jf, k); `metadata` adds the METADATA rules."""
    numbers = NUMBERS[machine]
    refused = dict(ALWAYS)
    if metadata:
        refused.update(dict.fromkeys(METADATA, errno.EPERM))
    body: list[tuple[int, int, int, int]] = []
    for name in UNIX_SOCKETS:
        body += [
            (_JEQ_K, 0, 4, numbers[name]),
            (_LD_W_ABS, 0, 0, _ARG0_OFFSET),  # the low word of the family (little-endian)
            (_JEQ_K, 0, 1, AF_UNIX),
            _refuse(errno.EACCES),
            (_LD_W_ABS, 0, 0, _NR_OFFSET),
        ]
    for name, code in refused.items():
        if name in numbers:  # an architecture without the old call (aarch64 has no chmod)
            body += [(_JEQ_K, 0, 1, numbers[name]), _refuse(code)]
    body.append((_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return _wrapped(machine, body)


CLONE_THREAD = 0x00010000
PROCESS_CALLS = {"x86_64": {"clone": 56, "fork": 57, "vfork": 58}, "aarch64": {"clone": 220}}
CLONE3 = 435


def process_program(machine: str) -> list[tuple[int, int, int, int]]:
    """A second filter, for workers where no cgroup bounds the run: no new process (threads
    are `clone` with CLONE_THREAD; `clone3` reads ENOSYS, so the C library falls back on
    `clone`, whose flags a filter can see)."""
    calls = PROCESS_CALLS[machine]
    body = [(_JEQ_K, 0, 1, CLONE3), _refuse(errno.ENOSYS)]
    for name in ("fork", "vfork"):
        if name in calls:
            body += [(_JEQ_K, 0, 1, calls[name]), _refuse(errno.EPERM)]
    body += [
        (_JEQ_K, 0, 3, calls["clone"]),
        (_LD_W_ABS, 0, 0, _ARG0_OFFSET),  # clone's flags
        (_JSET_K, 1, 0, CLONE_THREAD),
        _refuse(errno.EPERM),
        (_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return _wrapped(machine, body)


def _load(libc: Any, lines: list[tuple[int, int, int, int]]) -> bool:
    filters = (_SockFilter * len(lines))(*(_SockFilter(*line) for line in lines))
    fprog = _SockFprog(len(lines), filters)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return bool(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0)


def install(libc: Any, metadata: bool) -> bool:
    """Install the filter on this process (inherited by every process it starts); False where
    this architecture has no rules or the kernel refused it."""
    machine = os.uname().machine
    return machine in NUMBERS and _load(libc, program(machine, metadata))


def forbid_processes(libc: Any) -> bool:
    """Install `process_program` on this process (a worker, after the launcher forked it)."""
    machine = os.uname().machine
    return machine in PROCESS_CALLS and _load(libc, process_program(machine))


class PipeEnd:
    """One end of a pipe, with as much of a socket as an event loop's self-pipe uses."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def setblocking(self, flag: bool) -> None:
        os.set_blocking(self._fd, flag)

    def recv(self, size: int, flags: int = 0) -> bytes:
        return os.read(self._fd, size)

    def send(self, data: bytes, flags: int = 0) -> int:
        return os.write(self._fd, data)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __enter__(self) -> PipeEnd:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pipes_instead(original: Callable[..., Any]) -> Callable[..., Any]:
    def socketpair(family: Any = None, type: Any = socket.SOCK_STREAM, proto: int = 0) -> Any:
        try:
            return original(family, type, proto)
        except PermissionError:
            if family is not None or type != socket.SOCK_STREAM or proto:
                raise  # a pair asked for by kind is refused as the kernel refused it
            read, write = os.pipe2(os.O_CLOEXEC)
            return PipeEnd(read), PipeEnd(write)

    socketpair.__doc__ = (
        "A socket pair; where the sandbox refuses one, a pipe: the first end reads what the "
        "second writes (what an event loop's self-pipe needs)."
    )
    return socketpair


def lend_pipes() -> None:
    """Make `socket.socketpair()` (no arguments: an event loop's call) fall back on a one-way
    pipe where the filter refuses it."""
    socket.socketpair = _pipes_instead(socket.socketpair)
