"""A mail message as the mail readers give it, whatever its format: headers, body, attachments.

`mail_mime` (RFC 822, .eml and mbox messages) and `mail_msg` (Outlook .msg) fill a `Message`;
`mail` turns it into a document's text and reads its attachments. Message text is untrusted:
`clean` makes every string safe to store and show, `safe_name` every attachment name.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from rlm_desktop.documents.decoding import Unreadable, decode

SHOWN_HEADERS = ("From", "To", "Cc", "Date", "Subject", "Message-ID", "In-Reply-To")
"""The headers a message's text starts with, in this order, when the message has them
(Message-ID and In-Reply-To let the model follow a thread across the messages of an mbox)."""

_LATIN_LABELS = frozenset(
    ("us-ascii", "ascii", "iso-8859-1", "iso8859-1", "latin-1", "latin1", "cp1252", "windows-1252")
)
"""Labels that mail clients (and browsers, per WHATWG) read as Windows-1252, and that mislabelled
UTF-8 mail most often carries."""

_NAME_MAX = 100
_UNSAFE_IN_NAME = re.compile(r"[\x00-\x1f\x7f/\\]+")


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file attached to a message: its name and bytes, or why it has none to give."""

    name: str
    data: bytes | None
    reason: str | None = None
    message: bool = False
    """True for an attached message (message/rfc822, an Outlook item): read as mail."""


@dataclass(frozen=True)
class Message:
    """One message: shown headers in `SHOWN_HEADERS` order, the body as text, what reading it
    noted, and its first attachments (`count`: how many it has in all)."""

    headers: tuple[tuple[str, str], ...]
    body: str
    notes: tuple[str, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    count: int = 0

    def header(self, name: str) -> str:
        """The value of header `name`, or ""."""
        return next((value for key, value in self.headers if key == name), "")


def clean(text: str) -> str:
    """`text` without lone surrogates (left by undecodable header bytes), which no file, pipe
    or database can store: each becomes U+FFFD."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def one_line(text: str) -> str:
    """A header value on one line, its folding and runs of whitespace collapsed."""
    return " ".join(clean(text).split())


def safe_name(name: str, fallback: str) -> str:
    """An attachment's file name fit to name a document: no folders, control characters or
    slashes, at most 100 characters (its extension kept); `fallback` when nothing is left."""
    base = re.split(r"[/\\]", name.strip())[-1]
    base = one_line(_UNSAFE_IN_NAME.sub(" ", base)).strip(". ") or fallback
    if len(base) <= _NAME_MAX:
        return base
    stem, dot, suffix = base.rpartition(".")
    if dot and 0 < len(suffix) <= 10:
        return f"{stem[: _NAME_MAX - len(suffix) - 1]}.{suffix}"
    return base[:_NAME_MAX]


def _strict(raw: bytes, encoding: str) -> str | None:
    try:
        return raw.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def decode_body(raw: bytes, declared: str | None) -> tuple[str, tuple[str, ...]]:
    """A body's bytes as text, and a note when its declared charset was wrong or unknown.

    Text declared as ASCII or Latin-1 (or not declared) that is valid UTF-8 is read as UTF-8;
    Latin-1 labels are read as Windows-1252; a charset that fails or is unknown gives way to
    detection (`decoding.decode`), and binary junk to UTF-8 with replacement characters.
    """
    label = (declared or "").strip().lower()
    if raw.isascii():
        return raw.decode("ascii"), ()
    if not label or label in _LATIN_LABELS:
        text = _strict(raw, "utf-8")
        if text is not None:
            return text, ()
        if label:
            return _strict(raw, "cp1252") or raw.decode("latin-1"), ()
    else:
        text = _strict(raw, label)
        if text is not None:
            return text, ()
    try:
        decoded = decode(raw)
        text, encoding = decoded.text, decoded.encoding
    except Unreadable:
        text, encoding = raw.decode("utf-8", "replace"), "utf-8"
    if not label:
        return text, ()
    known = "wrong" if _known(label) else "unknown"
    return text, (f"a body's declared charset {label!r} is {known}; it was read as {encoding}",)


def _known(label: str) -> bool:
    try:
        codecs.lookup(label)
    except LookupError:
        return False
    return True
