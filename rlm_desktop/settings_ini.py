"""Qt's INI format (`QSettings.IniFormat`) with plain values only: text, numbers, lists and bytes.

`settings.ini` keeps Qt's format, so files written by earlier versions and by Qt read the same, but
Qt never parses it: QSettings decodes `@Variant(...)` into whatever type its QDataStream names, and
PySide unpickles a `PySide::PyObjectWrapper`, so whoever could write the file would run code in the
app (and a truncated one stopped the window from opening). Here a value is text (numbers and
booleans are text in an INI file), a comma list of text, or `@ByteArray(...)` bytes (the window's
geometry and splitter states); anything else that begins with a single `@` (Qt writes a text that
begins with `@` as `@@...`) is refused: left out and named, never decoded. Lines, quotes, escapes
and keys are read as Qt reads them, and written as Qt writes them, so that Qt reads our files back
the same. Writing a value of another type raises `TypeError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

Value = str | bytes | list[str]
"""What a setting reads back as."""
Plain = str | bool | int | float | bytes | list[str]
"""What a setting may be written as (booleans as `true`/`false`, numbers as text)."""

_SPACE = " \t\n\v\f\r"
_HEX = frozenset("0123456789abcdefABCDEF")
_UNESCAPE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_UNESCAPE.update({c: c for c in "\"?'\\"})
_ESCAPE = {v: "\\" + k for k, v in _UNESCAPE.items() if k not in "?'"} | {"\0": "\\0"}
_KEY_ESCAPE = re.compile(r"\\|%U([0-9A-Fa-f]{4})|%([0-9A-Fa-f]{2})")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.-]")
_RUN_END = re.compile(r'[\\",]')


class _Refused:
    """The mark of a value that is not plain."""


_REFUSED = _Refused()


@dataclass(frozen=True)
class Parsed:
    """A settings file's plain values by key (`section/name`), and the keys refused."""

    values: dict[str, Value]
    refused: tuple[str, ...] = ()


def parse(data: bytes) -> Parsed:
    """The settings in INI text, split and unescaped as Qt does, keeping plain values only."""
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    values: dict[str, Value] = {}
    refused: dict[str, None] = {}
    section = ""
    for line, equals in _lines(text):
        if line.startswith("["):
            section = _section(line)
            continue
        name = _unescape_key(line[:equals].strip(_SPACE)) if equals >= 0 else ""
        if not name:
            continue
        key, value = section + name, _value(line[equals + 1 :])
        values.pop(key, None)
        refused.pop(key, None)
        if isinstance(value, _Refused):
            refused[key] = None
        elif value is not None:
            values[key] = value
    return Parsed(values, tuple(refused))


def render(values: Mapping[str, Plain]) -> bytes:
    """`values` as INI text that Qt reads back the same; `TypeError` for a value not `Plain`."""
    sections: dict[str, list[str]] = {}
    for key, value in values.items():
        section, slash, name = key.partition("/")
        if not slash:
            section, name = "", key
        sections.setdefault(section, []).append(f"{_escape_key(name)}={_escape_value(value)}\n")
    blocks = []
    for section, lines in sections.items():
        name = _escape_key(section)
        header = "General" if not name else "%General" if name.lower() == "general" else name
        blocks.append(f"[{header}]\n" + "".join(lines))
    return "\n".join(blocks).encode("utf-8", "replace")


def _lines(text: str) -> Iterator[tuple[str, int]]:
    """The logical lines of INI text and where each one's `=` is (-1: none), as Qt splits them:
    a line ends at a line break or `;` outside quotes, a backslash escapes the next character (a
    line break too), and a `;` that begins a line begins a comment."""
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i < n and text[i] == ";":
            while i < n and text[i] not in "\r\n":
                i += 1
            continue
        start, equals, quoted = i, -1, False
        while i < n and (quoted or text[i] not in "\r\n;"):
            ch = text[i]
            i += 1
            if ch == "=" and not quoted and equals < 0:
                equals = i - 1 - start
            elif ch == "\\":
                i += 1 + (text[i : i + 2] in ("\n\r", "\r\n"))
            elif ch == '"':
                quoted = not quoted
        if i > start:
            yield text[start:i], equals


def _section(line: str) -> str:
    """The key prefix a `[section]` line starts ("" for `[General]`)."""
    end = line.find("]")
    name = line[1 : end if end > 0 else len(line)].strip(_SPACE)
    if name.lower() == "general":
        return ""
    return (name[1:] if name.lower() == "%general" else _unescape_key(name)) + "/"


def _unescape_key(raw: str) -> str:
    """A key as Qt escapes it: `\\` for `/`, `%XX` and `%UXXXX` for other characters."""

    def one(match: re.Match[str]) -> str:
        digits = match.group(1) or match.group(2)
        return chr(int(digits, 16)) if digits else "/"

    return _utf16(_KEY_ESCAPE.sub(one, raw))


def _escape_key(key: str) -> str:
    """`key` escaped as Qt writes it."""
    out = []
    for ch in key:
        if ch == "/":
            out.append("\\")
        elif ch.isascii() and _PLAIN_KEY.match(ch):
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"%{ord(ch):02X}")
        else:
            units = ch.encode("utf-16-be", "surrogatepass")
            out += (f"%U{units[j]:02X}{units[j + 1]:02X}" for j in range(0, len(units), 2))
    return "".join(out)


def _utf16(text: str) -> str:
    """`text` whose escapes gave UTF-16 code units: pairs joined, a lone surrogate replaced."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _value(raw: str) -> Value | None | _Refused:
    """A raw INI value as a plain value: None for `@Invalid()`, `_REFUSED` for any other type."""
    pieces, is_list = _unescape_value(raw)
    if not is_list:
        return _plain(pieces[0])
    items = [_plain(p) for p in pieces]
    texts = [i for i in items if isinstance(i, str)]
    return texts if len(texts) == len(items) else _REFUSED


def _plain(text: str) -> Value | None | _Refused:
    """One unescaped value: text, or the few `@` forms that are not Qt's own types."""
    if not text.startswith("@"):
        return text
    if text.startswith("@@"):
        return text[1:]
    if text == "@Invalid()":
        return None
    if text.endswith(")") and text.startswith("@ByteArray("):
        return text[11:-1].encode("latin-1", "replace")
    if text.endswith(")") and text.startswith("@String("):
        return text[8:-1]
    return _REFUSED


def _unescape_value(raw: str) -> tuple[list[str], bool]:
    """The unescaped pieces of a raw value and whether it is a comma list, as Qt reads them:
    quotes group, escapes are C's (`\\xHH...` and octal give UTF-16 units), and spaces around an
    unquoted piece go."""
    pieces: list[str] = []
    cur, keep, quoted, was_quoted, is_list, chop = "", 0, False, False, False, True
    i, n = _skip_spaces(raw, 0), len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\":
            if i + 1 >= n or (raw[i + 1] == "x" and i + 2 >= n):
                chop = False
                break
            esc, i = raw[i + 1], i + 2
            if esc in _UNESCAPE:
                cur += _UNESCAPE[esc]
            elif esc == "x" and raw[i] in _HEX:
                j = _run(raw, i, _HEX)
                cur, i = cur + chr(int(raw[i:j][-4:], 16)), j
            elif esc in "01234567":
                j = _run(raw, i - 1, frozenset("01234567"))
                cur, i = cur + chr(int(raw[i - 1 : j][-6:], 8) & 0xFFFF), j
            elif esc in "\r\n" and i < n and raw[i] in "\r\n" and raw[i] != esc:
                i += 1
            keep = len(cur)
        elif ch == '"':
            i, quoted, was_quoted = i + 1, not quoted, True
            if not quoted:
                i, keep = _skip_spaces(raw, i), len(cur)
        elif ch == "," and not quoted:
            pieces.append(cur if was_quoted else _chop(cur, keep))
            cur, keep, was_quoted, is_list = "", 0, False, True
            i = _skip_spaces(raw, i + 1)
        else:
            found = _RUN_END.search(raw, i + 1)
            j = found.start() if found else n
            cur, i = cur + raw[i:j], j
    pieces.append(cur if was_quoted or not chop else _chop(cur, keep))
    return [_utf16(p) for p in pieces], is_list


def _skip_spaces(text: str, i: int) -> int:
    return _run(text, i, frozenset(" \t"))


def _run(text: str, i: int, chars: frozenset[str]) -> int:
    """The end of the run of `chars` in `text` from `i`."""
    while i < len(text) and text[i] in chars:
        i += 1
    return i


def _chop(text: str, keep: int) -> str:
    """`text` without trailing spaces and tabs after its first `keep` characters."""
    return text[:keep] + text[keep:].rstrip(" \t")


def _escape_value(value: Plain) -> str:
    """A value as Qt writes it (a one-item list as its item, an empty list as `@Invalid()`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value).removesuffix(".0")
    if isinstance(value, str):
        return _escape_text(_mark(value))
    if isinstance(value, bytes):
        return _escape_text(f"@ByteArray({value.decode('latin-1')})", utf8=False)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(_escape_text(_mark(v)) for v in value) if value else "@Invalid()"
    raise TypeError(f"a setting is text, a number, a list of text or bytes, not {value!r}")


def _mark(text: str) -> str:
    """Text that cannot be read as another type: a leading `@` doubled, a NUL in `@String()`."""
    if "\0" in text:
        return f"@String({text})"
    return "@" + text if text.startswith("@") else text


def _escape_text(text: str, utf8: bool = True) -> str:
    """Text escaped as Qt writes it, quoted when it holds `;`, `,` or `=` or ends in a space."""
    out, guard = [], False
    for ch in text:
        if guard and ch in _HEX:
            out.append(f"\\x{ord(ch):x}")  # a digit after an escape would extend it
            continue
        guard = ch == "\0"
        if ch in _ESCAPE:
            out.append(_ESCAPE[ch])
        elif ord(ch) <= 0x1F or (ord(ch) >= 0x7F and not utf8):
            out.append(f"\\x{ord(ch):x}")
            guard = True
        else:
            out.append(ch)
    body = "".join(out)
    if any(c in text for c in ";,=") or body.startswith(" ") or body.endswith(" "):
        return f'"{body}"'
    return body
