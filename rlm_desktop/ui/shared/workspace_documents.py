"""The documents the workspace was left with, kept in a file of their own beside the settings.

A folder of thousands of files makes this list megabytes. In the settings file it was parsed
again with every setting read after a write, and past `settings_file.MAX_BYTES` the whole
settings file was ignored (and the next write lost every other setting). Here it is written
whole, through a temporary file renamed over it, and read only at start.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

from rlm_desktop.settings_file import replace_whole

FILE_NAME = "workspace-documents.json"

log = logging.getLogger(__name__)


def documents_file(settings_path: str) -> Path:
    """Where the workspace's documents are kept for the settings file at `settings_path`."""
    return Path(settings_path).with_name(FILE_NAME)


def read_documents(path: Path) -> list[tuple[str, str]] | None:
    """The (path, name) pairs kept in `path`, in order; None when there is no such file. A file
    that cannot be read or is not a list of pairs of text reads as no documents (logged)."""
    try:
        saved = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        log.warning("workspace documents in %s ignored: %s", path, error)
        return []
    return pairs(saved)


def pairs(saved: object) -> list[tuple[str, str]]:
    """The (path, name) pairs of a saved JSON list, leaving out any item that is not one."""
    if not isinstance(saved, list):
        return []
    return [
        (item[0], item[1])
        for item in saved
        if isinstance(item, list) and len(item) == 2 and all(isinstance(i, str) for i in item)
    ]


def write_documents(path: Path, documents: Sequence[tuple[str, str]]) -> None:
    """Keep `documents` in `path`; a failed write is logged (the next start loads none)."""
    data = json.dumps([list(pair) for pair in documents], ensure_ascii=False).encode("utf-8")
    try:
        replace_whole(str(path), data)
    except OSError as error:
        log.warning("cannot keep the workspace's documents in %s: %s", path, error)
