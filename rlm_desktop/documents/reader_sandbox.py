"""The bounded reader's sandbox: the process that parses hostile files reads none of the user's,
writes nothing and reaches no network, where the operating system allows.

The reader never needs a user's file: the application opens each document itself and sends its
bytes (loader.py), so the sandbox lets the reader read only what its code needs — Python, the
installed packages (PDFium's library, the OCR models inside the RapidOCR wheel, onnxruntime), the
application's own code and the system's libraries — and write nothing but `/dev/null` (no library
asked for a temporary file: every format loads so). It is applied by the reader process itself,
once, before its first request, with the REPL sandbox's own pieces (engine/sandbox/), so a
parser taken over by a file runs inside it:

- Linux: a new user namespace holding a network namespace (no interface up: no network at all)
  and an IPC namespace, where unprivileged user namespaces exist (the reader is single-threaded
  then, so it can enter them itself: multiprocessing starts it, not our launcher); Landlock (read
  the folders above, write nothing; from ABI 4 no TCP connect or bind, from ABI 6 no signal to a
  process outside, the application included); seccomp (seccomp.py: no new Unix socket — the
  user's ssh-agent, the session bus and the keyring behind it —, no io_uring or keyrings, no
  change of metadata such as `chmod`, which Landlock does not govern, no UDP where no network
  namespace holds, and no new process: each would get a memory bound of its own, and one that
  left the process group would outlive the reader). The REPL's read-only mount view and PID
  namespace are not needed: with nothing writable, the metadata rule stands for the view, and
  with no process started there is nothing for a PID namespace to end. Measured: ~4 ms of the
  reader's start (0.06 s median, was 0.05 s; `make bench`).
- macOS: the REPL's Seatbelt profile (seatbelt.py) with no folder to write, applied by the reader
  to itself with `sandbox_init` (the call behind `sandbox-exec`, which the app cannot put
  in front of a process multiprocessing starts).
- Elsewhere (Windows), or where none of it applies: a process of its own with its time and
  memory bounds, as before; the reader reports `process-only` and the application logs it.
  `RLM_DESKTOP_PORTABLE=1` (portability.py) takes this path everywhere, for the tests.

What it costs: PDFs that PDFium cannot read fall back on pypdf in the reader process alone (its
page workers need new processes and POSIX semaphores in `/dev/shm`, which the sandbox refuses):
a 500-page one took 7.2 s instead of 3.9 s here (two cores).
"""

from __future__ import annotations

import ctypes
import site
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlm_desktop import portability

if TYPE_CHECKING:
    from rlm_desktop.engine.sandbox.level import SandboxReport

PROCESS_ONLY = "process-only"
MACOS_LEVEL = "seatbelt"


def reader_folders() -> list[str]:
    """What the reader process may read besides the system's libraries: Python, its packages
    (the user's own site-packages too, where Python uses it), this application's code and, in a
    frozen bundle, the bundle's folder."""
    import rlm_desktop
    from rlm_desktop.engine.sandbox.kernel.launcher import bundle_folders
    from rlm_desktop.engine.sandbox.level import python_folders

    user_site = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []
    return sorted(
        {
            *python_folders(),
            *(folder for folder in user_site if folder in sys.path),
            str(Path(rlm_desktop.__file__).resolve().parent),
            *bundle_folders(),
        }
    )


def confine_reader(folders: Sequence[str]) -> dict[str, Any]:
    """Sandbox this process (the reader, single-threaded, before its first request) to read only
    `folders` and the system's libraries, write nothing and reach no network, as far as the
    platform allows; what applied, as `{"level", "filesystem", "network"}` (level.SandboxReport).
    """
    if portability.forced():  # the portable path, as on Windows
        return _report([], filesystem=False, network=False)
    if sys.platform.startswith("linux"):
        return _confine_linux(folders)
    if sys.platform == "darwin":
        return _confine_macos(folders)
    return _report([], filesystem=False, network=False)


def _report(pieces: list[str], *, filesystem: bool, network: bool) -> dict[str, Any]:
    return {
        "level": "+".join(pieces) or PROCESS_ONLY,
        "filesystem": filesystem,
        "network": network,
    }


def _confine_linux(folders: Sequence[str]) -> dict[str, Any]:
    from rlm_desktop.engine.sandbox.kernel import confine, seccomp

    libc = confine.load_libc()
    pieces = _enter_namespaces(libc)
    confine.drop_capabilities(libc)  # those the new user namespace gave, or root's
    read = [*confine.SYSTEM_READ, *folders, "/proc/self"]
    try:
        abi = confine.restrict(read, list(confine.DEVICES_READ_WRITE), [])
    except OSError:
        abi = 0  # nothing half applied: restricting is the last step
    if abi:
        pieces.insert(0, "landlock")
    missing = seccomp.Missing(
        read_only_view=True,
        ipc_namespace="ipcns" not in pieces,
        network_namespace="netns" not in pieces,
    )
    filtered = seccomp.install(libc, missing)
    if filtered:
        seccomp.forbid_processes(libc)
        pieces.append("seccomp")
    network = "netns" in pieces or (abi >= 4 and filtered)
    return _report(pieces, filesystem=bool(abi), network=network)


def _enter_namespaces(libc: Any) -> list[str]:
    """A user namespace holding network and IPC namespaces of this process's own; the pieces
    that hold (none where unprivileged user namespaces are refused). Ids stay unmapped: the
    reader creates no file, and the kernel checks access by the real ids."""
    from rlm_desktop.engine.sandbox.kernel.confine import CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWUSER

    options = (
        (CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC, ["netns", "ipcns"]),
        (CLONE_NEWUSER | CLONE_NEWNET, ["netns"]),
    )
    return next((names for flags, names in options if libc.unshare(flags) == 0), [])


def _confine_macos(folders: Sequence[str]) -> dict[str, Any]:
    from rlm_desktop.engine.sandbox.kernel import confine, seatbelt

    profile = seatbelt.seatbelt_profile({"read": list(folders)}).encode()
    try:
        sandbox_init = ctypes.CDLL("/usr/lib/libSystem.dylib").sandbox_init
    except (OSError, AttributeError):
        return _report([], filesystem=False, network=False)
    error = ctypes.c_char_p()
    applied = sandbox_init(profile, ctypes.c_uint64(0), ctypes.byref(error)) == 0
    held = applied and confine.seatbelt_holds({"outer": seatbelt.LEVEL})
    return _report([MACOS_LEVEL] if held else [], filesystem=held, network=held)


def described(report: SandboxReport) -> str:
    """What the reader's sandbox keeps a parser taken over by a hostile file from, in one line."""
    if report.isolated:
        return (
            f"documents are read in a sandbox ({report.level}): the reader process reads none "
            "of your files, writes nothing and reaches no network"
        )
    could = [
        *([] if report.filesystem else ["read and write your files"]),
        *([] if report.network else ["reach the network"]),
    ]
    return (
        f"documents are read in a process of their own without a full sandbox on this system "
        f"({report.level}): a parser taken over by a hostile file could {' and '.join(could)}"
    )
