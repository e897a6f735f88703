"""An RFC 822 message (a .eml file, one message of an mbox) to a `Message`, with the standard
library's `email` package and its modern policy (RFC 2047 words and RFC 2231 names decoded).

The body is the text/plain part, else the text/html one through `html_to_text` (`get_body`'s
choice); other inline text parts outside the body's alternatives (a list footer, text split
around an inline picture) follow it. Every other leaf part is an attachment; a message/rfc822
part is an attached message, handed on as its bytes.
"""

from __future__ import annotations

import functools
import mimetypes
from collections.abc import Iterator
from email import errors, policy
from email.message import EmailMessage
from email.message import Message as RawMessage
from email.parser import BytesParser
from email.policy import EmailPolicy
from typing import Any

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.htmltext import html_to_text
from rlm_desktop.documents.mail_message import (
    SHOWN_HEADERS,
    Attachment,
    Message,
    clean,
    decode_body,
    one_line,
    safe_name,
)

_MAIL_HEADERS = ("From", "To", "Subject", "Date", "Message-ID", "Received", "Sender")
"""A file with none of these is not a message (random bytes parse as a message without any)."""

_CUT = (errors.CloseBoundaryNotFoundDefect, errors.StartBoundaryNotFoundDefect)
_TOO_DEEP = (
    "e-mail message with parts nested too deeply to read; check that it is the file you meant"
)
_NOT_MAIL = (
    "not an e-mail message (no mail headers such as From, To or Subject at its start); "
    "check that it is the file you meant"
)


@functools.lru_cache(maxsize=4096)
def _parsed_header(name: str, value: str) -> Any:
    return policy.default.header_fetch_parse(name, value)


class _Policy(EmailPolicy):
    """`policy.default`, parsing each distinct header once: the email package parses a header
    again each time it is read, and reads a part's Content-Type many times (a third of the time
    an mbox took)."""

    def header_fetch_parse(self, name: str, value: str) -> Any:
        if hasattr(value, "name"):
            return value
        return _parsed_header(name, value)


_POLICY = _Policy()


def _header(message: RawMessage, name: str) -> str:
    try:
        value = message.get(name)
        text = "" if value is None else str(value)
    except Exception:  # a header the modern policy cannot parse: show it as it came
        text = next((str(v) for k, v in message.raw_items() if k.lower() == name.lower()), "")
    return one_line(text)


def _leaves(root: EmailMessage) -> Iterator[tuple[EmailMessage, bool]]:
    """Every non-multipart part in order, and whether it is inside a multipart/alternative."""
    stack: list[tuple[EmailMessage, bool]] = [(root, False)]
    while stack:
        part, in_alternative = stack.pop()
        if part.get_content_maintype() == "multipart" and part.is_multipart():
            inside = in_alternative or part.get_content_subtype() == "alternative"
            children = [child for child in part.iter_parts() if isinstance(child, EmailMessage)]
            stack.extend((child, inside) for child in reversed(children))
        else:
            yield part, in_alternative


def _text_of(part: EmailMessage) -> tuple[str, tuple[str, ...]]:
    raw = part.get_payload(decode=True)
    data = raw if isinstance(raw, bytes) else b""
    text, notes = decode_body(data, part.get_content_charset())
    text = text.replace("\r\n", "\n")
    if part.get_content_subtype() == "html":
        text = html_to_text(text)
    return text, notes


def _is_inline_text(part: EmailMessage) -> bool:
    return (
        part.get_content_type() in ("text/plain", "text/html")
        and not part.is_attachment()
        and part.get_filename() is None
    )


def _attachment(part: EmailMessage, number: int) -> Attachment:
    content_type = part.get_content_type()
    if content_type == "message/rfc822":
        inner = part.get_payload(0)
        subject = _header(inner, "Subject") if isinstance(inner, RawMessage) else ""
        name = safe_name(part.get_filename() or f"{subject}.eml", f"message {number}.eml")
        try:
            data = inner.as_bytes() if isinstance(inner, RawMessage) else b""
        except RecursionError:
            return Attachment(name, None, _TOO_DEEP)
        except Exception as exc:
            return Attachment(name, None, f"damaged attached message ({type(exc).__name__})")
        return Attachment(name, data, message=True)
    extension = mimetypes.guess_extension(content_type) or ""
    name = safe_name(part.get_filename() or "", f"attachment {number}{extension}")
    payload = part.get_payload(decode=True)
    return Attachment(name, payload if isinstance(payload, bytes) else b"")


def parse(data: bytes) -> EmailMessage:
    """`data` parsed as one message; raises `Unreadable` when it is not one."""
    try:
        parsed = BytesParser(policy=_POLICY).parsebytes(data)
    except RecursionError:
        raise Unreadable(_TOO_DEEP) from None
    if not isinstance(parsed, EmailMessage) or not any(h in parsed for h in _MAIL_HEADERS):
        raise Unreadable(_NOT_MAIL)
    return parsed


def read_mime(data: bytes, limit: int) -> Message:
    """The message in `data`, with its first `limit` attachments; raises `Unreadable` when
    `data` is not a message."""
    parsed = parse(data)
    try:
        return _message(parsed, limit)
    except RecursionError:  # parts nested too deeply to walk, though not to parse
        raise Unreadable(_TOO_DEEP) from None


def _message(parsed: EmailMessage, limit: int) -> Message:
    headers = tuple((name, value) for name in SHOWN_HEADERS if (value := _header(parsed, name)))
    chosen = parsed.get_body(preferencelist=("plain", "html"))
    texts: list[str] = []
    notes: list[str] = []
    attachments: list[Attachment] = []
    count = 0
    for part, in_alternative in _leaves(parsed):
        inline = _is_inline_text(part)
        if part is chosen or (inline and chosen is None):
            chosen = part
        elif not inline:
            count += 1
            if count <= limit:
                attachments.append(_attachment(part, count))
            continue
        elif in_alternative:
            continue  # another rendering of the body
        text, found = _text_of(part)
        texts.append(text)
        notes.extend(found)
    if any(isinstance(defect, _CUT) for part in parsed.walk() for defect in part.defects):
        notes.append(
            "the message ends before its last part is closed (the file may be cut short); "
            "what it holds was read"
        )
    body = clean("\n\n".join(text.strip("\n") for text in texts if text.strip()))
    return Message(headers, body, tuple(dict.fromkeys(notes)), tuple(attachments), count)
