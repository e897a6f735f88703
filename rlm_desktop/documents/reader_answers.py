"""What the bounded reader process sends the application, as data the application only reads.

The reader parses hostile files, so it is treated as possibly taken over: its answers must not be
able to make the application run code. Pickle can (an answer's bytes may name any function to
call while they are read), so answers are plain data instead: one frame of a JSON header and the
documents' texts as UTF-8 behind it (JSON alone escapes every non-ASCII character: three times
pickle's cost on a 100-million-character text, where UTF-8 costs what pickle did). Reading a frame
checks every field's type and every section's offsets; anything else is `BadAnswer`.

A frame: the header's length (4 bytes, big-endian), the header `[status, value, text_lengths]`,
then the texts' bytes in that order. An `Extracted` in `value` gives its `text` as an index into
the texts. Lone surrogates (text decoded with `surrogateescape`) pass as they did with pickle.
"""

from __future__ import annotations

import json
import struct
from typing import Any, TypeVar

from rlm_desktop.documents.extract import Extracted, Inner, Section
from rlm_desktop.engine.context import PART_KINDS

_LENGTH = struct.Struct(">I")
_UTF8 = ("utf-8", "surrogatepass")
T = TypeVar("T")


class BadAnswer(ValueError):
    """A frame that is not an answer the reader process could have sent."""


def encode(status: str, value: object = None) -> bytes:
    """One answer as a frame; `value` is an `Extracted`, a str, a dict of plain data or None."""
    texts: list[bytes] = []
    plain = _extracted_plain(value, texts) if isinstance(value, Extracted) else value
    header = json.dumps([status, plain, [len(text) for text in texts]]).encode()
    return b"".join((_LENGTH.pack(len(header)), header, *texts))


def _extracted_plain(extracted: Extracted, texts: list[bytes]) -> dict[str, Any]:
    texts.append(extracted.text.encode(*_UTF8))
    return {
        "text": len(texts) - 1,
        "encoding": extracted.encoding,
        "pages": extracted.pages,
        "notes": list(extracted.notes),
        "sections": [
            [s.kind, s.label, s.start, s.end, s.title, s.ocr_confidence] for s in extracted.sections
        ],
        "inner": [
            {
                "name": inner.name,
                "type": inner.type,
                "size": inner.size,
                "sha256": inner.sha256,
                "extracted": (
                    None if inner.extracted is None else _extracted_plain(inner.extracted, texts)
                ),
                "reason": inner.reason,
            }
            for inner in extracted.inner
        ],
    }


def decode(frame: bytes) -> tuple[str, Any]:
    """The `(status, value)` a frame holds, an `ok` answer's value as an `Extracted`; raises
    `BadAnswer` for anything the reader could not have sent."""
    try:
        (length,) = _LENGTH.unpack_from(frame)
        status, plain, lengths = json.loads(frame[_LENGTH.size : _LENGTH.size + length])
        texts = _texts(memoryview(frame)[_LENGTH.size + length :], _list(lengths, int))
        if not isinstance(status, str):
            raise BadAnswer("the status is not a string")
        if status == "ok":
            return status, _extracted(plain, texts)
        if plain is not None and not isinstance(plain, str | dict):
            raise BadAnswer(f"a {type(plain).__name__} where a message belongs")
        return status, plain
    except (struct.error, ValueError, TypeError, RecursionError) as error:
        raise BadAnswer(str(error)) from None


def _texts(rest: memoryview, lengths: list[int]) -> list[str]:
    if any(length < 0 for length in lengths) or sum(lengths) != len(rest):
        raise BadAnswer("the texts' lengths do not add up to the frame")
    texts, start = [], 0
    for length in lengths:
        texts.append(str(rest[start : start + length], *_UTF8))
        start += length
    return texts


def _extracted(plain: Any, texts: list[str]) -> Extracted:
    fields = _dict(plain, ("text", "encoding", "pages", "notes", "sections", "inner"))
    index = _of(fields["text"], int)
    if not 0 <= index < len(texts):
        raise BadAnswer(f"no text {index}")
    text = texts[index]
    sections = tuple(_section(entry, len(text)) for entry in _list(fields["sections"], list))
    return Extracted(
        text,
        encoding=_optional(fields["encoding"], str),
        pages=_optional(fields["pages"], int),
        notes=tuple(_list(fields["notes"], str)),
        sections=sections,
        inner=tuple(_inner(entry, texts) for entry in _list(fields["inner"], dict)),
    )


def _section(entry: list[Any], length: int) -> Section:
    kind, label, start, end, title, confidence = entry
    section = Section(
        _of(kind, str),
        _of(label, str),
        _of(start, int),
        _of(end, int),
        _of(title, str),
        _optional(confidence, float),
    )
    if kind not in PART_KINDS or not 0 <= start <= end <= length:
        raise BadAnswer(f"a {kind!r} section at {start}-{end} of a text of {length}")
    return section


def _inner(entry: dict[str, Any], texts: list[str]) -> Inner:
    fields = _dict(entry, ("name", "type", "size", "sha256", "extracted", "reason"))
    found = fields["extracted"]
    return Inner(
        _of(fields["name"], str),
        _of(fields["type"], str),
        _of(fields["size"], int),
        _of(fields["sha256"], str),
        None if found is None else _extracted(found, texts),
        _optional(fields["reason"], str),
    )


def _dict(value: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict) or tuple(value) != keys:
        raise BadAnswer(f"not the fields {', '.join(keys)}")
    return value


def _of(value: Any, kind: type[T]) -> T:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise BadAnswer(f"a {type(value).__name__} where a {kind.__name__} belongs")
    return value


def _optional(value: Any, kind: type[T]) -> T | None:
    return None if value is None else _of(value, kind)


def _list(value: Any, kind: type[T]) -> list[T]:
    return [_of(item, kind) for item in _of(value, list)]
