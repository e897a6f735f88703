"""Shows our code (`rlm_desktop.*`) the Python that Windows has, in a Python on Linux.

Put on `PYTHONPATH` (tests/windows_names.py), this runs when the interpreter starts, before
anything of ours is imported. From then on, an `import` written in our code gets:
- for `os`, `signal`, `select`, `socket`, `time`, `mmap` and `asyncio`, the module without the
  names Windows' module lacks (read off typeshed's `sys.platform != "win32"` stubs for Python
  3.11), and `os.supports_dir_fd` and its kin as Windows has them;
- for `resource`, `fcntl`, `pwd`, `grp`, `termios` and the other POSIX-only modules, the
  `ModuleNotFoundError` Windows gives;
and event loops made as `asyncio.run` makes them refuse `add_reader`, `add_writer` and signal
handlers, as Windows' default (proactor) loop does.

The standard library and other packages keep the real modules: here they take their POSIX paths,
which need those names, where on Windows they would take their own. So a name our code reads,
at import or later, fails here as it would there; what the standard library does on Windows
under a call of ours is not tested here.
"""

from __future__ import annotations

import asyncio
import builtins
import os
import sys
import types
from collections.abc import Mapping
from typing import Any

_OURS = "rlm_desktop"

_WINDOWS_LACKS: dict[str, str] = {
    "os": """
        CLD_CONTINUED CLD_DUMPED CLD_EXITED CLD_KILLED CLD_STOPPED CLD_TRAPPED EFD_CLOEXEC
        EFD_NONBLOCK EFD_SEMAPHORE EX_CANTCREAT EX_CONFIG EX_DATAERR EX_IOERR EX_NOHOST
        EX_NOINPUT EX_NOPERM EX_NOUSER EX_OK EX_OSERR EX_OSFILE EX_PROTOCOL EX_SOFTWARE
        EX_TEMPFAIL EX_UNAVAILABLE EX_USAGE F_LOCK F_TEST F_TLOCK F_ULOCK GRND_NONBLOCK
        GRND_RANDOM MFD_ALLOW_SEALING MFD_CLOEXEC MFD_HUGETLB NGROUPS_MAX O_ACCMODE O_ASYNC
        O_CLOEXEC O_DIRECT O_DIRECTORY O_DSYNC O_FSYNC O_LARGEFILE O_NDELAY O_NOATIME O_NOCTTY
        O_NOFOLLOW O_NONBLOCK O_PATH O_RSYNC O_SYNC O_TMPFILE POSIX_FADV_DONTNEED
        POSIX_FADV_NOREUSE POSIX_FADV_NORMAL POSIX_FADV_RANDOM POSIX_FADV_SEQUENTIAL
        POSIX_FADV_WILLNEED POSIX_SPAWN_CLOSE POSIX_SPAWN_DUP2 POSIX_SPAWN_OPEN PRIO_PGRP
        PRIO_PROCESS PRIO_USER P_ALL P_PGID P_PID P_PIDFD RTLD_DEEPBIND RTLD_GLOBAL RTLD_LAZY
        RTLD_LOCAL RTLD_NODELETE RTLD_NOLOAD RTLD_NOW RWF_APPEND RWF_DSYNC RWF_HIPRI RWF_NOWAIT
        RWF_SYNC SCHED_BATCH SCHED_FIFO SCHED_IDLE SCHED_OTHER SCHED_RESET_ON_FORK SCHED_RR
        SEEK_DATA SEEK_HOLE SPLICE_F_MORE SPLICE_F_MOVE SPLICE_F_NONBLOCK ST_APPEND ST_MANDLOCK
        ST_NOATIME ST_NODEV ST_NODIRATIME ST_NOEXEC ST_NOSUID ST_RDONLY ST_RELATIME
        ST_SYNCHRONOUS ST_WRITE WCONTINUED WCOREDUMP WEXITED WEXITSTATUS WIFCONTINUED WIFEXITED
        WIFSIGNALED WIFSTOPPED WNOHANG WNOWAIT WSTOPPED WSTOPSIG WTERMSIG WUNTRACED XATTR_CREATE
        XATTR_REPLACE XATTR_SIZE_MAX chown chroot confstr confstr_names copy_file_range ctermid
        environb eventfd eventfd_read eventfd_write fchdir fchmod fchown fdatasync fork forkpty
        fpathconf fstatvfs fwalk get_blocking getegid getenvb geteuid getgid getgrouplist
        getgroups getloadavg getpgid getpgrp getpriority getrandom getresgid getresuid getsid
        getuid getxattr initgroups killpg lchmod lchown listxattr lockf login_tty major makedev
        memfd_create minor mkfifo mknod nice openpty pathconf pathconf_names pidfd_open pipe2
        posix_fadvise posix_fallocate posix_spawn posix_spawnp pread preadv pwrite pwritev readv
        register_at_fork removexattr sched_get_priority_max sched_get_priority_min
        sched_getaffinity sched_getparam sched_getscheduler sched_param sched_rr_get_interval
        sched_setaffinity sched_setparam sched_setscheduler sched_yield sendfile set_blocking
        setegid seteuid setgid setgroups setpgid setpgrp setpriority setregid setresgid
        setresuid setreuid setsid setuid setxattr spawnlp spawnlpe spawnvp spawnvpe splice
        statvfs sync sysconf sysconf_names tcgetpgrp tcsetpgrp ttyname uname wait wait3 wait4
        waitid waitid_result writev
    """,
    "signal": """
        ITIMER_PROF ITIMER_REAL ITIMER_VIRTUAL ItimerError SIGALRM SIGBUS SIGCHLD SIGCLD SIGCONT
        SIGHUP SIGIO SIGIOT SIGKILL SIGPIPE SIGPOLL SIGPROF SIGPWR SIGQUIT SIGRTMAX SIGRTMIN
        SIGSTKFLT SIGSTOP SIGSYS SIGTRAP SIGTSTP SIGTTIN SIGTTOU SIGURG SIGUSR1 SIGUSR2
        SIGVTALRM SIGWINCH SIGXCPU SIGXFSZ SIG_BLOCK SIG_SETMASK SIG_UNBLOCK Sigmasks alarm
        getitimer pause pidfd_send_signal pthread_kill pthread_sigmask setitimer siginterrupt
        sigpending sigtimedwait sigwait sigwaitinfo struct_siginfo
    """,
    "select": """
        EPOLLERR EPOLLET EPOLLEXCLUSIVE EPOLLHUP EPOLLIN EPOLLMSG EPOLLONESHOT EPOLLOUT EPOLLPRI
        EPOLLRDBAND EPOLLRDHUP EPOLLRDNORM EPOLLWRBAND EPOLLWRNORM EPOLL_CLOEXEC PIPE_BUF
        POLLERR POLLHUP POLLIN POLLMSG POLLNVAL POLLOUT POLLPRI POLLRDBAND POLLRDHUP POLLRDNORM
        POLLWRBAND POLLWRNORM epoll poll
    """,
    "socket": """
        AF_NETLINK AF_PACKET AF_UNIX CMSG_LEN CMSG_SPACE MSG_CMSG_CLOEXEC MSG_DONTWAIT
        MSG_NOSIGNAL SCM_CREDENTIALS SCM_RIGHTS SOCK_CLOEXEC SOCK_NONBLOCK SO_PASSCRED
        SO_PEERCRED SO_REUSEPORT recv_fds send_fds sethostname
    """,
    "time": """
        CLOCK_BOOTTIME CLOCK_MONOTONIC CLOCK_MONOTONIC_RAW CLOCK_PROCESS_CPUTIME_ID
        CLOCK_REALTIME CLOCK_TAI CLOCK_THREAD_CPUTIME_ID clock_getres clock_gettime
        clock_gettime_ns clock_settime clock_settime_ns pthread_getcpuclockid tzset
    """,
    "mmap": """
        MADV_DONTNEED MADV_NORMAL MADV_RANDOM MADV_SEQUENTIAL MADV_WILLNEED MAP_ANON
        MAP_ANONYMOUS MAP_PRIVATE MAP_SHARED PROT_EXEC PROT_READ PROT_WRITE
    """,
    "asyncio": """
        AbstractChildWatcher FastChildWatcher MultiLoopChildWatcher PidfdChildWatcher
        SafeChildWatcher ThreadedChildWatcher open_unix_connection start_unix_server
    """,
}
"""The names each module has on Linux and not on Windows."""

_WINDOWS_HAS = {
    "os": {
        "supports_dir_fd": frozenset(),
        "supports_fd": frozenset({os.stat, os.truncate}),
        "supports_follow_symlinks": frozenset({os.stat}),
        "supports_effective_ids": frozenset(),
    }
}
"""Names whose value differs on Windows: no call there takes `dir_fd`, and so on."""

MODULES_WINDOWS_LACKS = frozenset(
    {"_curses", "_posixshmem", "_posixsubprocess", "crypt", "curses", "fcntl", "grp", "nis"}
    | {"posix", "pty", "pwd", "readline", "resource", "spwd", "syslog", "termios", "tty"}
)
"""Modules that Windows' Python does not have."""


class _WindowsModule(types.ModuleType):
    """A module as Windows has it: the names it lacks there are missing."""

    def __init__(self, real: types.ModuleType, lacks: frozenset[str], has: Mapping[str, Any]):
        super().__init__(real.__name__, real.__doc__)
        vars(self).update(has)
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_lacks", lacks)

    def __getattr__(self, name: str) -> Any:
        if name in self._lacks:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r} on Windows")
        return getattr(self._real, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real, name, value)

    def __dir__(self) -> list[str]:
        return sorted((set(dir(self._real)) | set(vars(self))) - self._lacks - {"_real", "_lacks"})


def _windows_view(name: str) -> types.ModuleType:
    real = sys.modules.get(name) or __import__(name)
    return _WindowsModule(real, frozenset(_WINDOWS_LACKS[name].split()), _WINDOWS_HAS.get(name, {}))


_VIEWS = {name: _windows_view(name) for name in _WINDOWS_LACKS}
_real_import = builtins.__import__


def _importer_is_ours(globals_: Mapping[str, Any] | None) -> bool:
    if not globals_:
        return False
    spec = globals_.get("__spec__")
    name = spec.name if spec is not None else str(globals_.get("__name__", ""))
    return name.partition(".")[0] == _OURS


def _import(
    name: str,
    globals: Mapping[str, Any] | None = None,  # noqa: A002 (the signature of __import__)
    locals: Mapping[str, Any] | None = None,  # noqa: A002
    fromlist: tuple[str, ...] | list[str] | None = (),
    level: int = 0,
) -> types.ModuleType:
    if level != 0 or not _importer_is_ours(globals):
        return _real_import(name, globals, locals, fromlist, level)
    top = name.partition(".")[0]
    if top in MODULES_WINDOWS_LACKS:
        raise ModuleNotFoundError(f"No module named {top!r} (not on Windows)", name=top)
    module = _real_import(name, globals, locals, fromlist, level)
    if fromlist:
        return _VIEWS.get(module.__name__, module)
    return _VIEWS.get(top, module)


class _ProactorLikeLoop(asyncio.SelectorEventLoop):
    """An event loop whose calls that Windows' default loop lacks raise as they do there. Only
    the calls that start something are taken away: asyncio's own transports keep using the
    selector underneath, and call `remove_writer` and the like themselves."""

    def _not_on_windows(self, *args: object, **kwargs: object) -> Any:
        raise NotImplementedError("Windows' event loop has no such call")

    add_reader = add_writer = add_signal_handler = _not_on_windows
    create_unix_connection = create_unix_server = _not_on_windows


class _ProactorLikePolicy(asyncio.DefaultEventLoopPolicy):
    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        return _ProactorLikeLoop()


builtins.__import__ = _import
asyncio.set_event_loop_policy(_ProactorLikePolicy())
