"""The app's portable paths, and the one switch that makes them run on Linux too.

Most users are on Windows or macOS. Where the app uses a facility that not every system has
(POSIX signals handled by the event loop, process groups, `RLIMIT_AS`, `fork`, Unix sockets,
`/proc`, the kernel's sandboxes), a portable path stands beside it and is chosen by capability:

    if portability.has(os, "killpg"):   # hasattr(os, "killpg"), unless forced
        ...                              # the POSIX path
    else:
        ...                              # the portable path, the one Windows takes

Setting `RLM_DESKTOP_PORTABLE=1` in the environment (`PORTABLE_ENV`) makes every such choice take
the portable path even where the POSIX facility is there, so the tests run on Linux the code
Windows runs. It is read at each choice, so processes the app starts (the documents' reader, the
REPL's workers) inherit it with the environment. It is for tests and diagnosis: forced, the app
gives up protection this system offers (the documents' reader runs unsandboxed, as on Windows).
"""

from __future__ import annotations

import os

PORTABLE_ENV = "RLM_DESKTOP_PORTABLE"
"""The environment variable that forces the portable paths: any value but empty or `0`."""


def forced() -> bool:
    """True when `RLM_DESKTOP_PORTABLE` asks for the portable paths."""
    return os.environ.get(PORTABLE_ENV, "") not in ("", "0")


def has(owner: object, name: str) -> bool:
    """`hasattr(owner, name)`, False when the portable paths are forced: whether to take the
    path that needs `owner.name` (`os.setsid`, `signal.SIGKILL`, a module's function)."""
    return hasattr(owner, name) and not forced()
