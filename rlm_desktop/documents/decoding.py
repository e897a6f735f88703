"""Bytes to text: byte-order marks, UTF-8, then charset-normalizer; binary data is refused.

Undecodable bytes never cost the rest of a file: they become U+FFFD and the document gets a note.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

SNIFF_BYTES = 8000
"""Like git: data is binary when a NUL byte shows up this early and no UTF-16/32 BOM explains it."""

DETECT_BYTES = 1 << 20
"""The encoding is judged on this much of a file, around its first non-UTF-8 byte; the verdict
then decodes the whole file."""

FALLBACK = "cp1252"
"""The legacy encoding to prefer. charset-normalizer often ranks a Baltic or Central European code
page first for plain Western text that Windows-1252 decodes just as cleanly; like the WHATWG
encoding standard for unlabelled pages, we take Windows-1252 whenever it is among the near-ties,
and when nothing is recognised at all."""

NEAR_TIE = 0.1
"""Candidates whose chaos (charset-normalizer's mess score, 0..1) is this close count as ties."""

_CONTROL = bytes(b for b in range(32) if chr(b) not in "\t\n\v\f\r\x1b")
_CONTROL_SHARE = 0.05

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


class Unreadable(Exception):
    """The file cannot give usable text. The message says why and how to fix it."""


@dataclass(frozen=True)
class Decoded:
    """Text decoded from bytes, the encoding used and how many characters had to be replaced."""

    text: str
    encoding: str
    replaced: int = 0
    guessed: bool = False

    def notes(self) -> tuple[str, ...]:
        """What a reader should know about this decoding."""
        notes = []
        if self.guessed:
            notes.append(
                f"encoding not recognised; read as {self.encoding}, some letters may be "
                "wrong (save the file as UTF-8 to be sure)"
            )
        if self.replaced:
            notes.append(
                f"{self.replaced} undecodable byte sequence(s) in {self.encoding} "
                "replaced with \ufffd"
            )
        return tuple(notes)


def _bom_encoding(data: bytes) -> str | None:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    return None


def looks_binary(data: bytes) -> bool:
    """True when the bytes are evidently not text (NUL or many control bytes early on).

    A UTF-16/32 byte-order mark explains NUL bytes, so such data counts as text.
    """
    if _bom_encoding(data) is not None:
        return False
    head = data[:SNIFF_BYTES]
    if b"\x00" in head:
        return True
    controls = len(head) - len(head.translate(None, _CONTROL))
    return controls > _CONTROL_SHARE * len(head)


def _replaced(text: str) -> int:
    return text.count("\ufffd")


def normalize_newlines(data: bytes) -> bytes:
    """Windows line ends (CRLF) to LF, on the bytes so no second copy of the text is needed.

    Safe for UTF-8 and every legacy encoding we decode (no multi-byte sequence contains CR or
    LF bytes); UTF-16/32 data, recognised by its byte-order mark, is left to `decode`.
    """
    if b"\r\n" not in data or _bom_encoding(data) not in (None, "utf-8-sig"):
        return data
    return data.replace(b"\r\n", b"\n")


def decode(data: bytes) -> Decoded:
    """Decode file bytes to text, or raise `Unreadable` for binary data."""
    bom = _bom_encoding(data)
    if bom is not None:
        text = data.decode(bom, errors="replace").replace("\r\n", "\n")
        return Decoded(text, bom, _replaced(text))
    if looks_binary(data):
        raise Unreadable("binary content (not text); load a text, PDF or Word export instead")
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    # Judge the encoding where the trouble is: the start of a big file may be plain ASCII.
    window = data[max(0, first_bad - DETECT_BYTES // 2) : first_bad + DETECT_BYTES // 2]
    sample = window.decode("utf-8", errors="replace")
    bad = _replaced(sample)
    non_ascii = len(sample) - len(sample.encode("ascii", errors="ignore"))
    if non_ascii - bad >= bad:
        # Mostly valid UTF-8 with a few broken sequences: keep UTF-8 rather than let a detector
        # pick a legacy code page that would garble every correct accented character.
        text = data.decode("utf-8", errors="replace")
        return Decoded(text, "utf-8", _replaced(text))
    return _detect(data, window)


def _detect(data: bytes, sample: bytes) -> Decoded:
    from charset_normalizer import from_bytes

    results = from_bytes(sample)
    best = results.best()
    if best is None:
        text = data.decode(FALLBACK, errors="replace")
        return Decoded(text, FALLBACK, _replaced(text), guessed=True)
    close = [m for m in results if m.chaos <= best.chaos + NEAR_TIE]
    if any(FALLBACK in m.could_be_from_charset for m in close):
        encoding = FALLBACK
    else:
        encoding = codecs.lookup(best.encoding).name
    text = data.decode(encoding, errors="replace")
    return Decoded(text, encoding, _replaced(text))
