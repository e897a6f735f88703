"""The folder and token of a Ray cluster started here (`--ray local`), private to the user.

Left to itself, Ray works in `/tmp/ray`, a folder shared by every user of the machine: it makes each
folder it creates world-writable (0777, so that users can share it), and a new cluster writes its
auth token to `~/.ray/auth_token` under the umask (readable by all where the home folder is). A
cluster started here works in a folder of its own under `<data folder>/ray` instead: that folder is
0700, so Ray's 0777 folders inside it are out of other users' reach. Its token is
`<data folder>/ray/auth_token`, written here 0600 and named to Ray (and the processes it starts) by
`RAY_AUTH_TOKEN_PATH` while the cluster runs. The cluster's folder (its logs, sockets and spilled
objects) goes when the cluster stops.

Ray puts Unix sockets in its folder, and a socket's path has at most 107 bytes (103 on macOS).
Where the cluster's folder is too deep for that, Ray is given a short name for it: a link in a
folder of its own under `/tmp`, 0700 too. (Ray on Windows uses TCP, with no such limit.)

A cluster joined at an address was started by someone else: its folder and token are its owner's
(Ray reads the token from `RAY_AUTH_TOKEN`, `RAY_AUTH_TOKEN_PATH` or `~/.ray/auth_token`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rlm_desktop import paths

FOLDER = "ray"
TOKEN_FILE = "auth_token"
TOKEN_PATH_VARIABLE = "RAY_AUTH_TOKEN_PATH"
TOKEN_VARIABLE = "RAY_AUTH_TOKEN"
SOCKET_ROOM = 72
"""What Ray adds to its folder's path for its longest socket path,
`/session_<date>_<time>_<microseconds>_<pid>/sockets/plasma_store` (64 bytes with a 7-digit pid),
and some room."""
SHORT_NAMES = "/tmp"


def socket_path_limit() -> int | None:
    """The longest Unix socket path Ray accepts here (None where Ray uses TCP instead)."""
    if sys.platform == "win32":
        return None
    return 103 if sys.platform == "darwin" else 107


@dataclass
class PrivateRayFolder:
    """Where one cluster started here works, and the token it uses; `close` when it stopped."""

    temp_dir: str
    """The folder to give Ray (`ray.init(_temp_dir=...)`): the cluster's folder or its short name."""
    folder: Path
    token: Path
    short_name: Path | None
    _token_path_before: str | None
    _token_path_set: bool

    @classmethod
    def open(cls) -> PrivateRayFolder:
        """A new folder for a cluster under `<data folder>/ray` (0700), a token there (0600), and
        `RAY_AUTH_TOKEN_PATH` naming it unless the user named a token of their own."""
        base = paths.data_dir() / FOLDER
        base.mkdir(mode=0o700, exist_ok=True)
        os.chmod(base, 0o700)
        token = _token_in(base)
        folder = Path(tempfile.mkdtemp(dir=base))
        temp_dir, short_name = str(folder), None
        limit = socket_path_limit()
        if limit is not None and len(os.fsencode(folder)) + SOCKET_ROOM > limit:
            short_name = Path(tempfile.mkdtemp(prefix="rlm-ray-", dir=_short_names_root()))
            (short_name / "r").symlink_to(folder, target_is_directory=True)
            temp_dir = str(short_name / "r")
        before = os.environ.get(TOKEN_PATH_VARIABLE)
        own_token = before is None and TOKEN_VARIABLE not in os.environ
        if own_token:
            os.environ[TOKEN_PATH_VARIABLE] = str(token)
        return cls(temp_dir, folder, token, short_name, before, own_token)

    def close(self) -> None:
        """Remove the cluster's folder and short name, and put `RAY_AUTH_TOKEN_PATH` back."""
        if self._token_path_set and os.environ.get(TOKEN_PATH_VARIABLE) == str(self.token):
            del os.environ[TOKEN_PATH_VARIABLE]
        for made in (self.short_name, self.folder):
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)


def _token_in(folder: Path) -> Path:
    """`folder/auth_token`, written (0600) with a new random token if it is not there yet; never
    replaced once there, so clusters started at the same time agree on it."""
    token = folder / TOKEN_FILE
    if not token.exists():
        descriptor, draft = tempfile.mkstemp(dir=folder)  # 0600
        try:
            with os.fdopen(descriptor, "w") as file:
                file.write(secrets.token_hex(32))  # as Ray makes one
            os.link(draft, token)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            os.replace(draft, token)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(draft)
    os.chmod(token, 0o600)
    return token


def _short_names_root() -> str:
    return SHORT_NAMES if os.path.isdir(SHORT_NAMES) else tempfile.gettempdir()
