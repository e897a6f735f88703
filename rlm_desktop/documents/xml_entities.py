"""Whether an XML part declares entities (`<!ENTITY`), however a parser would read its bytes.

A parser reads a part in the encoding its byte-order mark or first bytes show (UTF-8, UTF-16 or
UTF-32, either byte order, with a mark or without; EBCDIC by its first bytes), switched by the XML
declaration to any encoding that declaration names: libxml2 follows `encoding="UTF-7"`, in which
`<!ENTITY` can be written `+ADwAIQ-ENTITY`. Whitespace, comments and processing instructions may
come before the document type. So a part whose first bytes, read in any of those encodings, start
(after a mark and whitespace) with `<` is searched for `<!ENTITY` in every Unicode form, and in the
encoding its declaration names where that is another one. A declaration naming an encoding Python
cannot decode raises `UncheckedEncoding`: such a part is refused, never let through unchecked.
"""

from __future__ import annotations

import codecs
import re
from typing import IO

READ_CHUNK = 1024 * 1024
"""How much of a part is read at a time."""

ENTITY = "<!ENTITY"
_UNICODE_FORMS = ("utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")
_MARKS = tuple(ENTITY.encode(form) for form in _UNICODE_FORMS)
_OVERLAP = max(len(mark) for mark in _MARKS) - 1
_FIRST_READINGS = (*_UNICODE_FORMS, "cp037")
"""The encodings a parser may take a part's first bytes for, before its declaration is read."""
_SEARCHED = {"utf-8", "utf-8-sig", "utf-16", "utf-32", *_UNICODE_FORMS}
"""Encodings (as `codecs` names them) the search in every Unicode form already covers."""
_HEAD = 4096
_LEADING = "\ufeff \t\r\n"
_DECLARATION = re.compile(
    r"<\?xml\s[^>]*?\bencoding\s*=\s*([\"'])([A-Za-z][\w.-]{0,63})\1", re.IGNORECASE | re.ASCII
)


class UncheckedEncoding(ValueError):
    """A part's XML declaration names an encoding the check cannot decode."""

    def __init__(self, name: str) -> None:
        super().__init__(f"its XML is in an encoding ({name}) that cannot be checked")
        self.name = name


def declares_entities(part: IO[bytes]) -> bool:
    """True when the XML `part` (a file open for reading, at its start) declares an entity; False
    for a part that is not XML in any encoding a parser reads."""
    chunk = part.read(READ_CHUNK)
    readings = [chunk[:_HEAD].decode(form, "replace") for form in _FIRST_READINGS]
    if not any(text.lstrip(_LEADING).startswith("<") for text in readings):
        return False
    declared = _declared_encoding(readings)
    decoder = codecs.getincrementaldecoder(declared)("replace") if declared else None
    tail, text_tail = b"", ""
    while chunk:
        window = tail + chunk
        if any(mark in window for mark in _MARKS):
            return True
        tail = window[-_OVERLAP:]
        if decoder is not None:
            text = text_tail + decoder.decode(chunk)
            if ENTITY in text:
                return True
            text_tail = text[-(len(ENTITY) - 1) :]
        chunk = part.read(READ_CHUNK)
    return decoder is not None and ENTITY in text_tail + decoder.decode(b"", final=True)


def _declared_encoding(readings: list[str]) -> str | None:
    """The encoding the XML declaration names, where it is one the Unicode search misses."""
    for text in readings:
        found = _DECLARATION.match(text.lstrip(_LEADING))
        if found:
            return _checkable(found[2])
    return None


def _checkable(name: str) -> str | None:
    """`name` as `codecs` knows it (None for a Unicode form); `UncheckedEncoding` if unknown."""
    try:
        codec = codecs.lookup(name)
        b"<".decode(codec.name, "replace")  # only text encodings decode bytes to text
    except (LookupError, UnicodeError):
        raise UncheckedEncoding(name) from None
    return None if codec.name in _SEARCHED else codec.name
