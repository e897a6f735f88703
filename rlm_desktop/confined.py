"""Paths that must stay in their folder: the one check of every path a shared file names (a task
file's or a questions file's documents) and of every folder the app writes or removes by a name
it read.

A file someone else wrote (a shared benchmark, a colleague's questions) can name `../`, an
absolute path, `~/.ssh/id_ed25519` or a link that points out, and so send any file the user can
read to a provider; a name read from a shared database can point a removal anywhere. So the path
is resolved (links followed) and confirmed inside its folder (resolved too) before anything reads,
writes or removes it.
"""

from __future__ import annotations

import os
from pathlib import Path


class OutsideFolder(ValueError):
    """A path that leads out of the folder it must stay in; `how` says how it got out ("is an
    absolute path outside", "leads outside", "is a link to …, outside")."""

    def __init__(self, named: str, folder: Path, how: str) -> None:
        super().__init__(f"{named!r} {how} {folder}: it is not used")
        self.named = named
        self.folder = folder
        self.how = how


def inside(folder: Path, named: str | os.PathLike[str]) -> Path:
    """The path `named` (absolute, or relative to `folder`) leads to, links followed, when it is
    `folder` or inside it; `OutsideFolder` otherwise."""
    text = os.fspath(named)
    root = os.path.realpath(folder)
    joined = os.path.normpath(os.path.join(os.path.abspath(folder), text))
    resolved = os.path.realpath(joined)
    if _within(resolved, root):
        return Path(resolved)
    if os.path.isabs(text):
        how = "is an absolute path outside"
    elif not _within(joined, os.path.abspath(folder)):
        how = "leads outside"
    else:
        how = f"is a link to {resolved}, outside"
    raise OutsideFolder(text, folder, how)


def _within(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # another drive (Windows)
        return False
