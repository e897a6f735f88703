"""How a document's name is shown and matched in a list: its own name first, then its folder,
with nothing in a name able to pass for something else, and a filter over names and types.

A file name may hold line breaks, direction overrides (U+202E turns `invoice‮txt.exe` round)
and invisible marks; shown as they are, they make one name read as another or spill into the
next column. `shown` writes each as its escape (`\\n`, `\\u202e`), as Python's `repr` does.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

_DECEPTIVE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]"
)
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_GLOB = re.compile(r"[*?\[]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def shown(text: str) -> str:
    """`text` with control, direction and invisible characters written as escapes."""
    return _DECEPTIVE.sub(_escape, text)


def own_name_and_folder(name: str, parent: str = "") -> tuple[str, str]:
    """A document's name split into its own (`COPYRIGHT`) and the folder before it
    (`analyst/common`); a file named on its own has `parent` (its folder's name) there."""
    folder, _, own = name.rpartition("/")
    return own, folder or parent


def name_filter(text: str) -> Callable[[str, str], bool]:
    """A test of (name, type) against what the user typed: comma-separated terms, any of which
    matches. A term with `*`, `?` or `[` is a glob over the file's own name (`*.pdf`); another
    is a part of the whole name (`minutes`, `2024/`) or a type (`pdf`, `markdown`). Letter case
    is ignored; nothing typed matches everything."""
    terms = [term.strip().casefold() for term in text.split(",") if term.strip()]
    if not terms:
        return lambda _name, _type: True
    globs = [re.compile(fnmatch.translate(t)) for t in terms if _GLOB.search(t)]
    parts = [t for t in terms if not _GLOB.search(t)]

    def matches(name: str, kind: str) -> bool:
        folded = name.casefold()
        own = folded.rpartition("/")[2]
        kind = kind.casefold()
        return any(g.match(own) for g in globs) or any(p in folded or p == kind for p in parts)

    return matches
