"""The one rule for a run's text in every file the app writes out (the exports and the CSV files):
whatever the run held, the file is valid UTF-8 that no reader acts on or chokes on, and what
could not be written as it is stays visible, marked the same way in every format.

A lone surrogate (model code's `"\\ud800"`, a file name's undecodable byte kept by Python as
`\\udce9`) is spelled as its escape, as the database's columns spell it (`store.writer.
stored_text`); NUL, every other control but tab, line feed and carriage return, the bidi controls
that reorder what a reviewer reads, line and paragraph separators (`str.splitlines` breaks a JSON
line at them) and noncharacters (parse errors in HTML) are written as escapes of their code point
(`\\x00`, `\\x1b`, `\\x9b`, `\\u202e`, `\\u2028`, `\\ufffe`), as the command line shows them
(`formatting.file_text`). Everything else stays as it is: accents, emoji, a byte order mark or
zero-width characters inside a text (they join emoji and some scripts' letters).

The exact text stays in the database's event log; a file written out shows it, marked.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rlm_desktop.formatting import file_text
from rlm_desktop.store.writer import stored_text

_JSON_CONTROL = re.compile(r"\\(?:[bf]|u00)")
"""How `json.dumps` writes a control character in a string (or a backslash followed by b, f or
u00, which a string can hold too: then the long way)."""


def exported_text(text: str) -> str:
    """`text` as an export writes it (see the module)."""
    if text.isprintable():  # no control, format or separator character, no surrogate
        return text
    return file_text(stored_text(text))


def exported(value: Any) -> Any:
    """`value` with every string in it (keys too, in lists and dicts at any depth) as
    `exported_text` writes it."""
    if isinstance(value, str):
        return exported_text(value)
    if isinstance(value, dict):
        return {exported(key): exported(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [exported(item) for item in value]
    return value


def exported_json(value: Any) -> str:
    """`value` as JSON text, its strings as `exported_text` writes them: readers of the JSON get
    the marked text back, not the raw characters its escapes would give."""
    text = json.dumps(value, ensure_ascii=False)
    if _JSON_CONTROL.search(text) is None and exported_text(text) == text:
        return text  # none of its strings holds a character to mark
    return json.dumps(exported(value), ensure_ascii=False)
