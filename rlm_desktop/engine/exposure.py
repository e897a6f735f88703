"""Which secrets a folder opened to model code would expose, in one line per folder.

Opening a folder (`--allow-read PATH`, Settings → Sandbox) lets model code read everything under
it, read-only. That is what the user wants for a project folder, and a leak for the filesystem
root, the home folder, the app's data folder (every saved session: documents, questions,
answers) or a store of keys and tokens. This module is the one list of such places, for the
command line and the window alike; it warns and never refuses (the user may mean it).

Paths are compared once every link is resolved, as the sandbox opens them: a link named
`notes` that points at `~/.ssh` exposes `~/.ssh`, while a link inside an opened folder that
points at `~/.ssh` exposes nothing (Landlock checks the file the link leads to).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SHOWN = 3
"""How many of the secrets a folder holds one line names (the rest are counted)."""
FIX = "open a folder that holds only what the code needs instead"
HOME_STORES: tuple[tuple[str, str, str | None], ...] = (
    (".ssh", "SSH keys", None),
    (".gnupg", "GnuPG keys", "GNUPGHOME"),
    (".aws", "AWS credentials", None),
    (".config/gcloud", "Google Cloud credentials", "CLOUDSDK_CONFIG"),
    (".azure", "Azure credentials", "AZURE_CONFIG_DIR"),
    (".kube", "Kubernetes credentials", None),
    (".docker", "Docker registry logins", "DOCKER_CONFIG"),
    (".netrc", "saved logins", "NETRC"),
    (".git-credentials", "Git credentials", None),
    (".config/gh", "GitHub CLI token", None),
    (".pgpass", "PostgreSQL passwords", "PGPASSFILE"),
    (".npmrc", "npm token", None),
    (".pypirc", "PyPI token", None),
    (".cargo/credentials.toml", "crates.io token", None),
    (".vault-token", "Vault token", None),
    (".terraform.d", "Terraform tokens", None),
    (".password-store", "pass password store", "PASSWORD_STORE_DIR"),
    (".local/share/keyrings", "keyring of saved passwords and API keys", None),
    (".mozilla", "Firefox browser profiles", None),
    (".thunderbird", "Thunderbird mail profiles", None),
    (".config/google-chrome", "Chrome browser profiles", None),
    (".config/chromium", "Chromium browser profiles", None),
    (".config/BraveSoftware", "Brave browser profiles", None),
    (".config/microsoft-edge", "Edge browser profiles", None),
    ("Library/Keychains", "macOS keychains", None),
    ("Library/Cookies", "Safari cookies", None),
    ("Library/Application Support/Google/Chrome", "Chrome browser profiles", None),
    ("Library/Application Support/Firefox", "Firefox browser profiles", None),
)
"""(path under the home folder, what it holds, the variable that moves it) of each well-known
store of keys, tokens, passwords and browser sessions."""
SYSTEM_STORES: tuple[tuple[str, str], ...] = (
    ("/etc/shadow", "the system's password hashes (/etc/shadow)"),
    ("/etc/ssh", "this machine's SSH host keys (/etc/ssh)"),
    ("/proc", "the process folder (/proc: other programs' environments, API keys among them)"),
)
"""(path, what it is) of the system's secrets an account may be able to read (root can)."""


@dataclass(frozen=True)
class Secret:
    """A place model code should not read: its real path, and what it is in a sentence."""

    path: Path
    """With every link resolved."""
    label: str
    """e.g. "your SSH keys (~/.ssh)"."""
    inside_counts: bool = True
    """Whether opening a folder inside it exposes part of it (True but for the home folder,
    whose subfolders are where projects live)."""


@dataclass(frozen=True)
class Exposure:
    """What opening one folder exposes."""

    opened: str
    """The folder as the user gave it."""
    real: Path
    """The folder the sandbox opens (links resolved)."""
    within: Secret | None
    """The secret the folder is, or is inside (None: it only holds some)."""
    held: tuple[Secret, ...]
    """The secrets inside the folder."""

    def line(self) -> str:
        """One line: what model code could read, and how to avoid it."""
        shown, given = self.opened, os.path.expanduser(self.opened)
        if Path(os.path.abspath(given)) != self.real:
            shown += f" ({'a link to' if os.path.islink(given) else 'that is,'} {self.real})"
        names = [secret.label for secret in self.held]
        listed = ", ".join(names[:SHOWN]) + (
            f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
        )
        if self.real == Path(self.real.anchor):
            head = f"{shown} is the whole filesystem"
        elif self.within is None:
            head, listed = f"{shown} holds {listed}", ""
        elif self.within.path == self.real:
            head = f"{shown} is {self.within.label}"
        else:
            head = f"{shown} is inside {self.within.label}"
        if listed:
            head += f", with {listed}"
        return f"{head}: model code may read all of it (read-only); {FIX}"


def exposures(
    opened: Iterable[str], data_dir: Path, homes: Sequence[Path] | None = None
) -> list[Exposure]:
    """What each of the `opened` folders (or files) that exposes a secret exposes, in order.

    `data_dir` is the app's data folder (`paths.data_dir()`); `homes` the user's home folders
    (default: `$HOME` and the account's home in the password database).
    """
    secrets = known_secrets(data_dir, _homes() if homes is None else homes)
    found = []
    for given in opened:
        real = _real(given)
        if real is None:
            continue
        within = [
            s for s in secrets if real == s.path or (s.inside_counts and _under(real, s.path))
        ]
        held = [s for s in secrets if s.path != real and _under(s.path, real)]
        if within or held or real == Path(real.anchor):
            most_specific = max(within, key=lambda s: len(s.path.parts), default=None)
            found.append(Exposure(given, real, most_specific, tuple(held)))
    return found


def exposure_warnings(
    opened: Iterable[str], data_dir: Path, homes: Sequence[Path] | None = None
) -> list[str]:
    """`exposures` as one line each."""
    return [exposure.line() for exposure in exposures(opened, data_dir, homes)]


def known_secrets(data_dir: Path, homes: Sequence[Path]) -> list[Secret]:
    """The secret places on this machine that exist, most telling first, without repeats."""
    candidates: list[tuple[Path, str, bool]] = []
    for home in homes:
        candidates.append((home, f"your home folder ({home})", False))
    candidates.append((data_dir, f"the app's data folder ({data_dir}: saved sessions)", True))
    for home in homes:
        for relative, what, variable in HOME_STORES:
            for place in (home / relative, *_moved(relative, variable)):
                candidates.append((place, f"your {what} ({_shown(place, home)})", True))
    for extra in _listed_files("KUBECONFIG"):
        candidates.append((extra, f"your Kubernetes credentials ({extra})", True))
    candidates += [(Path(path), label, True) for path, label in SYSTEM_STORES]
    secrets: dict[Path, Secret] = {}
    for place, label, inside_counts in candidates:
        real = _real(str(place))
        if real is not None and real not in secrets and os.access(real, os.R_OK):
            secrets[real] = Secret(real, label, inside_counts)
    return list(secrets.values())


def _homes() -> list[Path]:
    homes = [Path.home()]
    try:
        import pwd
    except ImportError:  # Windows keeps no account database of this kind
        return homes
    with contextlib.suppress(KeyError):  # an account without an entry
        homes.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return list(dict.fromkeys(homes))


def _moved(relative: str, variable: str | None) -> list[Path]:
    """Where the environment moves a home store: its own variable, or the XDG base folder."""
    moved = [os.environ.get(variable, "") if variable else ""]
    for prefix, base in ((".config/", "XDG_CONFIG_HOME"), (".local/share/", "XDG_DATA_HOME")):
        if relative.startswith(prefix) and os.environ.get(base):
            moved.append(os.path.join(os.environ[base], relative.removeprefix(prefix)))
    return [Path(place).expanduser() for place in moved if place]


def _listed_files(variable: str) -> list[Path]:
    value = os.environ.get(variable, "")
    return [Path(part).expanduser() for part in value.split(os.pathsep) if part]


def _real(path: str) -> Path | None:
    """`path` with `~` and every link resolved; None when nothing is there."""
    expanded = os.path.expanduser(path)
    if not os.path.lexists(expanded):
        return None
    return Path(os.path.realpath(expanded))


def _under(path: Path, folder: Path) -> bool:
    return path != folder and path.is_relative_to(folder)


def _shown(place: Path, home: Path) -> str:
    return f"~/{place.relative_to(home)}" if place.is_relative_to(home) else str(place)
