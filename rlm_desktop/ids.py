"""Ids are names, never paths: the one check every id read from outside goes through, and the one
way a folder named by an id is made.

Session, evaluation and batch ids come back from places the app does not control: a sessions.db a
colleague shared, an imported file, the command line. The app names folders after some of them
(a question's kept REPL state, an evaluation's results), so an id of `/home/u/Documents` or
`../../x` would turn "remove this session's folder" into "remove that folder". An id is therefore
checked against the shape of the ids the app makes where it is read, and a folder named by one is
built only here, resolved and confirmed inside the folder it belongs to before anything touches
it.

The shape: 1-64 characters, lower-case ASCII letters, digits, `-` and `_`, starting with a letter
or a digit — a file name on every system the app runs on (no separators, no dots, no case that a
case-insensitive disk would fold into another id), and never one of the names Windows keeps for
devices (`con`, `nul`, `com1`, ...). The app's own ids (`20261129-101530-3fa2c1`) have it.
"""

from __future__ import annotations

import re
from pathlib import Path

from rlm_desktop import confined

_SHAPE = re.compile(r"[0-9a-z][0-9a-z_-]{0,63}")
_PREFIX_SHAPE = re.compile(r"[0-9a-z_-]{1,64}")
_WINDOWS_DEVICES = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])")
_SHOWN = 80


class MalformedId(ValueError):
    """An id that is not in the shape of the app's ids: never used as a name of anything."""


def is_well_formed(value: object) -> bool:
    """True when `value` is an id in the shape described above."""
    return (
        isinstance(value, str)
        and _SHAPE.fullmatch(value) is not None
        and _WINDOWS_DEVICES.fullmatch(value) is None
    )


def shown(value: object) -> str:
    """`value` as a message may quote it: a repr, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def malformed(value: object, kind: str = "session") -> str:
    """Why `value` is refused as a `kind` id, in one line."""
    return (
        f"{shown(value)} is not a valid {kind} id (ids are 1-64 lower-case letters, digits, "
        "'-' and '_'): the record is damaged or was made elsewhere, so the app does not act on it"
    )


def checked(value: object, kind: str = "session") -> str:
    """`value` when it is a well-formed id; `MalformedId` naming the `kind` otherwise."""
    if not is_well_formed(value):
        raise MalformedId(malformed(value, kind))
    return str(value)


def checked_prefix(value: str, kind: str = "session") -> str:
    """`value`, an id or the start of one typed by a user; `MalformedId` when it could be
    neither (it holds a separator, a dot, a space, ...)."""
    if _PREFIX_SHAPE.fullmatch(value) is None:
        raise MalformedId(
            f"{shown(value)} is not a {kind} id: ids are lower-case letters, digits, '-' and "
            "'_' (run `rlm-desktop sessions list` to see them)"
        )
    return value


def folder_for(root: Path, name: str, kind: str = "session") -> Path:
    """The folder `root/name` for the id `name`, confirmed inside `root` once both are resolved:
    a link planted at `root/name` that leads elsewhere is refused, never followed.

    Raises `MalformedId` for an id not in the app's shape, `confined.OutsideFolder` for a path
    that resolves outside `root`.
    """
    folder = root / checked(name, kind)
    confined.inside(root, folder)
    return folder
