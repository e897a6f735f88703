"""The macOS sandbox of the REPL workers: a Seatbelt profile the launcher is started under.

macOS has no Landlock and no unprivileged namespaces; `sandbox-exec` (deprecated by Apple, still
used by every major browser and by Bazel) applies a Seatbelt profile to a process and everything it
forks, and the process cannot lift it. The policy is the Linux one: read Python, the system's
libraries and what the user opened; write only the run's scratch folder; no network at all.
The app builds the launcher's command line; the launcher checks that it really runs sandboxed
before it reports the level (confine.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
LEVEL = "sandbox-exec"

SYSTEM_READ = (
    "/System",
    "/usr/lib",
    "/usr/share",
    "/usr/bin",
    "/bin",
    "/Library/Frameworks",
    "/Library/Developer/CommandLineTools",
    "/private/etc/ssl",
    "/private/var/db/dyld",
    "/private/var/db/timezone",
    "/private/etc/localtime",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
)
DEVICES_READ_WRITE = ("/dev/null",)


def _quoted(path: str) -> str:
    """A path as an SBPL string literal (backslashes and quotes escaped; no newline survives)."""
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _filters(paths: Iterable[str]) -> str:
    return " ".join(
        f"(literal {_quoted(p)})" if p.startswith("/dev/") else f"(subpath {_quoted(p)})"
        for p in dict.fromkeys(paths)
    )


def seatbelt_profile(spec: dict[str, Any]) -> str:
    """The Seatbelt (SBPL) profile for a launcher sandboxed by `spec` (see level.sandbox_spec).

    Denies by default; allows reading Python's folders, the system's libraries and `allow_read`,
    writing only `write` (the run's scratch folder; the document reader has none) and
    `/dev/null`, forking and executing Python, and signals only within the sandbox. Network is
    not allowed in any form (the worker's channel to the app is a socket it inherits, which needs
    no rule). File metadata (stat) stays readable everywhere, as it does under Landlock: Python's
    start-up probes paths it never opens.
    """
    read = [*SYSTEM_READ, *spec.get("read", []), *spec.get("allow_read", [])]
    scratch = [str(spec["write"])] if spec.get("write") else []
    executables = [*spec.get("read", []), "/usr/bin", "/bin"]
    lines = [
        "(version 1)",
        "(deny default)",
        "(deny network*)",
        "(allow process-fork)",
        f"(allow process-exec {_filters(executables)})",
        "(allow signal (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow ipc-posix-sem ipc-posix-shm)",
        "(allow file-read-metadata)",
        f"(allow file-read* {_filters(read)} {_filters(scratch)})",
        f"(allow file-write* {_filters(scratch)} {_filters(DEVICES_READ_WRITE)})",
        f"(allow file-read-data {_filters(DEVICES_READ_WRITE)})",
    ]
    return "\n".join(lines) + "\n"


def seatbelt_command(command: Sequence[str], spec: dict[str, Any]) -> list[str]:
    """`command` run under `sandbox-exec` with the profile for `spec`."""
    return [SANDBOX_EXEC, "-p", seatbelt_profile(spec), *command]


def applies(platform: str) -> bool:
    """True where the launcher is wrapped in a Seatbelt profile (macOS with sandbox-exec)."""
    return platform == "darwin" and Path(SANDBOX_EXEC).exists()

