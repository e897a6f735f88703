"""A trajectory file read within bounds: its size checked before reading, its lines parsed as
JSON with their numbers, and every value a reader takes checked where it is taken.

The file is untrusted: it may be huge, cut off, not UTF-8, nested without end, or hold NaN,
infinities, negative counts or ids shaped like paths. Each of these is a `Refusal` naming the
line, which `into_store` turns into one line naming the file.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop import ids

MAX_BYTES = 256 * 1024 * 1024
"""The largest file imported (256 MiB): far past any run's log, short of what memory allows."""
MAX_NESTING = 400
"""How deeply a line's JSON may nest (a depth-10 run's log nests about 70 levels)."""
_BIGGEST_COUNT = 2**63 - 1


class Refusal(Exception):
    """Bad input: `message` says what is wrong with line `line` (None: the file as a whole)."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class RawFile:
    """A file's parsed content: its JSON lines (or its one JSON document) and its digest."""

    entries: list[Entry]
    whole_document: bool
    sha256: str


def read_file(path: Path, max_bytes: int = MAX_BYTES) -> RawFile:
    """Read and parse `path`, refusing it before reading past `max_bytes`."""
    size = path.stat().st_size
    if size > max_bytes:
        raise Refusal(None, f"is {size:,} bytes, over the import limit of {max_bytes:,} bytes")
    with path.open("rb") as file:
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise Refusal(None, f"holds more than the import limit of {max_bytes:,} bytes")
    if not data.strip():
        raise Refusal(None, "is empty: there is no trajectory in it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise Refusal(line, "is not UTF-8 text (a trajectory is JSON)") from None
    return RawFile(*_parsed(text), hashlib.sha256(data).hexdigest())


def _parsed(text: str) -> tuple[list[Entry], bool]:
    """The file's JSON lines; a pretty-printed document (DSPy's) as one entry at line 1."""
    lines = text.split("\n")
    entries: list[Entry] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = loads(line, number)
        except Refusal as refusal:
            if number == len(lines) and not text.endswith("\n"):
                raise Refusal(number, "is cut off: the file ends in the middle of it") from None
            if not entries and text.lstrip()[:1] in "[{":
                return [Entry(1, loads(text, 1))], True
            raise refusal
        entries.append(Entry(number, value))
    return entries, False


def loads(text: str, line: int) -> Any:
    """`text` parsed as JSON, refusing NaN and infinities and nesting past `MAX_NESTING`."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        where = line + error.lineno - 1
        raise Refusal(where, f"is not JSON ({error.msg}, column {error.colno})") from None
    except RecursionError:
        raise Refusal(line, f"nests deeper than {MAX_NESTING} levels") from None
    except ValueError as error:
        raise Refusal(line, str(error)) from None
    _check_nesting(value, line)
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"holds {name}, which is not a number JSON allows")


def _check_nesting(value: Any, line: int) -> None:
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > MAX_NESTING:
            raise Refusal(line, f"nests deeper than {MAX_NESTING} levels")
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise Refusal(line, "holds a number too large to be one (past a float's range)")


@dataclass(frozen=True)
class Entry:
    """A JSON object of the file and the line it is on: its values taken and checked."""

    line: int
    data: Any

    def fail(self, message: str) -> Refusal:
        """A refusal of this entry's line."""
        return Refusal(self.line, message)

    def get(self, key: str) -> Any:
        """The raw value under `key` (None if absent, or if this is not an object)."""
        return self.data.get(key) if isinstance(self.data, dict) else None

    def has(self, key: str) -> bool:
        """True when this is an object holding `key`."""
        return isinstance(self.data, dict) and key in self.data

    def text(self, key: str, default: str = "") -> str:
        """The text under `key`; `default` when it is absent or null."""
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.fail(f"its {key!r} is {_kind(value)}, not text")
        return value

    def optional_text(self, key: str) -> str | None:
        """The text under `key`, or None."""
        return self.text(key) if self.get(key) is not None else None

    def number(self, key: str) -> float | None:
        """A non-negative number under `key` (None when absent or null)."""
        value = self.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(f"its {key!r} is {_kind(value)}, not a number")
        if value < 0:
            raise self.fail(f"its {key!r} is negative ({value}): a time, count or cost cannot be")
        if value > _BIGGEST_COUNT:
            raise self.fail(f"its {key!r} is too large to be a count or a time ({value:.3g})")
        return float(value)

    def count(self, key: str) -> int:
        """A whole non-negative number under `key` (0 when absent or null)."""
        value = self.number(key)
        if value is None:
            return 0
        if value != int(value):
            raise self.fail(f"its {key!r} is {value}, not a whole number")
        return int(value)

    def flag(self, key: str) -> bool:
        """A true/false value under `key` (False when absent)."""
        value = self.get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.fail(f"its {key!r} is {_kind(value)}, not true or false")
        return value

    def child(self, key: str) -> Entry | None:
        """The object under `key`, on this entry's line (None when absent or null)."""
        value = self.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(f"its {key!r} is {_kind(value)}, not an object")
        return Entry(self.line, value)

    def items(self, key: str) -> list[Entry]:
        """The objects listed under `key` (none when absent or null)."""
        value = self.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise self.fail(f"its {key!r} is {_kind(value)}, not a list of objects")
        return [Entry(self.line, item) for item in value]

    def call_id(self, key: str = "call_id") -> str | None:
        """An id under `key`, in the shape of the app's ids (never a path: `ids`)."""
        value = self.get(key)
        if value is None:
            return None
        if not ids.is_well_formed(value):
            raise self.fail(f"its {key!r} {ids.shown(value)} is not an id (ids are 1-64 "
                            "lower-case letters, digits, '-' and '_')")  # fmt: skip
        return str(value)


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", int: "a number",
             float: "a number"}  # fmt: skip
    return names.get(type(value), "null")


def as_text(value: Any) -> str:
    """A value a format keeps as text or as JSON (a prompt given as messages) as text."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
