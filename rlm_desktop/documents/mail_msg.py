"""An Outlook .msg file to a `Message`, through extract-msg (imported lazily).

Attachments are opened one at a time, only as many as will be read: extract-msg would otherwise
open every one of them (and every message attached to them) when the file is opened. An attached
Outlook item is handed on as a .msg file of its own (extract-msg's `exportBytes`).
"""

from __future__ import annotations

import email.utils
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.htmltext import html_to_text
from rlm_desktop.documents.mail_message import (
    Attachment,
    Message,
    clean,
    decode_body,
    one_line,
    safe_name,
)

_RESAVE = "open it in Outlook and save it again, or export it as .eml"
_PROPERTIES: tuple[tuple[str, str], ...] = (
    ("From", "sender"),
    ("To", "to"),
    ("Cc", "cc"),
    ("Date", "date"),
    ("Subject", "subject"),
    ("Message-ID", "messageId"),
    ("In-Reply-To", "inReplyTo"),
)


def _value(item: Any, attribute: str) -> str:
    try:
        value = getattr(item, attribute, None)
    except Exception:  # a damaged property costs that header, not the message
        return ""
    if isinstance(value, datetime):
        return email.utils.format_datetime(value)
    return one_line(value) if isinstance(value, str) else ""


def _body(item: Any) -> tuple[str, tuple[str, ...]]:
    for attribute, as_html in (("body", False), ("htmlBody", True)):
        try:
            value = getattr(item, attribute, None)
        except Exception:
            continue
        if isinstance(value, bytes):
            value, notes = decode_body(value, None)
        else:
            notes = ()
        if isinstance(value, str) and value.strip():
            text = value.replace("\r\n", "\n")
            return clean(html_to_text(text) if as_html else text).strip("\n"), notes
    return "", ()


def _attachment(item: Any, number: int) -> Attachment:
    kind = getattr(getattr(item, "type", None), "name", "")
    if kind == "MSG":
        inner = item.data
        name = safe_name(_value(item, "longFilename") or f"{_value(inner, 'subject')}.msg", "")
        return Attachment(name or f"message {number}.msg", inner.exportBytes(), message=True)
    name = safe_name(
        _value(item, "longFilename") or _value(item, "shortFilename") or _value(item, "name"),
        f"attachment {number}",
    )
    data = item.data if kind == "DATA" else None
    if not isinstance(data, bytes):
        return Attachment(
            name, None, "an Outlook attachment that holds no file (a link or an item)"
        )
    return Attachment(name, data)


def _attachments(msg: Any, limit: int) -> tuple[list[Attachment], int]:
    folders = list(dict.fromkeys(
        entry[0] for entry in msg.listDir(False, True, False) if entry[0].startswith("__attach")
    ))  # fmt: skip
    opened: list[Attachment] = []
    start: Callable[[Any, str], Any] = msg.initAttachmentFunc
    for number, folder in enumerate(folders[:limit], start=1):
        try:
            opened.append(_attachment(start(msg, folder), number))
        except Exception as exc:
            reason = f"damaged attachment ({type(exc).__name__}); {_RESAVE}"
            opened.append(Attachment(f"attachment {number}", None, reason))
    return opened, len(folders)


def read_msg(data: bytes, limit: int) -> Message:
    """The Outlook message in `data`, with its first `limit` attachments; raises `Unreadable`
    for a damaged file or one that holds no message."""
    import extract_msg

    logging.getLogger("extract_msg").setLevel(logging.CRITICAL)  # its complaints become our line
    try:
        msg = extract_msg.openMsg(data, delayAttachments=True)
    except Exception as exc:
        reason = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise Unreadable(f"damaged Outlook .msg file ({reason}); {_RESAVE}") from exc
    try:
        headers = tuple(
            (name, value) for name, attribute in _PROPERTIES if (value := _value(msg, attribute))
        )
        body, notes = _body(msg)
        attachments, count = _attachments(msg, limit)
    finally:
        msg.close()
    return Message(headers, body, notes, tuple(attachments), count)
