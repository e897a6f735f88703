"""Builders for test mail: .eml and .mbox with the standard library, Outlook .msg by hand.

No library writes .msg files, so `make_msg` lays out the property streams of [MS-OXMSG] (a
message's, its recipients', its attachments' and an attached message's) itself and has
extract-msg's own compound-file writer (`OleWriter`, [MS-CFB]) put them in the file. Only what a
simple Outlook message holds is written: subject, sender, recipients, date, plain and HTML body,
attachments by value and attached messages.
"""

from __future__ import annotations

import mailbox
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from extract_msg.ole_writer import OleWriter

_UNICODE, _BINARY, _LONG, _TIME, _OBJECT = 0x001F, 0x0102, 0x0003, 0x0040, 0x000D
_READABLE_WRITABLE = 0x6
_FILETIME_EPOCH = datetime(1601, 1, 1, tzinfo=UTC)
_BY_VALUE, _EMBEDDED = 1, 5
_TO = 1


def make_eml(
    sender: str = "Alice <alice@example.com>",
    to: str = "Bob <bob@example.com>",
    subject: str = "Hello",
    body: str | None = "Hi Bob.",
    html: str | None = None,
    charset: str = "utf-8",
    attachments: Sequence[tuple[str, bytes]] = (),
    messages: Sequence[EmailMessage] = (),
    **headers: str,
) -> EmailMessage:
    """A message with a plain body and/or an HTML body, file attachments and attached
    messages (`message/rfc822`); `headers` are added as they are (`Cc`, `In_Reply_To`)."""
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, to, subject
    message["Date"] = "Tue, 01 Apr 2025 10:00:00 +0000"
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    if body is not None:
        message.set_content(body, charset=charset)
    if html is not None:
        if body is None:
            message.set_content(html, subtype="html", charset=charset)
        else:
            message.add_alternative(html, subtype="html", charset=charset)
    for name, data in attachments:
        maintype, subtype = (
            ("text", "csv") if name.endswith(".csv") else ("application", "octet-stream")
        )
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    for inner in messages:
        message.add_attachment(inner)
    return message


def write_eml(path: Path, message: EmailMessage) -> Path:
    """Write `message` as a .eml file."""
    path.write_bytes(message.as_bytes())
    return path


def write_mbox(path: Path, messages: Sequence[EmailMessage]) -> Path:
    """Write `messages` into an mbox file with the standard library's `mailbox.mbox`."""
    box = mailbox.mbox(path)
    box.lock()
    try:
        for message in messages:
            box.add(message)
        box.flush()
    finally:
        box.unlock()
        box.close()
    return path


def many_attachments_eml(count: int) -> bytes:
    """A message with `count` small CSV attachments, built with `email.mime` (the modern API
    takes minutes for ten thousand parts)."""
    from email.mime.multipart import MIMEMultipart
    from email.mime.text import MIMEText

    message = MIMEMultipart()
    message["From"], message["To"], message["Subject"] = "a@example.com", "b@example.com", "many"
    message.attach(MIMEText("A message with many attachments."))
    for number in range(count):
        part = MIMEText(f"n,square\n{number},{number * number}\n", "csv")
        part.add_header("Content-Disposition", "attachment", filename=f"table {number}.csv")
        message.attach(part)
    return message.as_bytes()


def nested_eml(depth: int, phrase: str = "the innermost message") -> EmailMessage:
    """A message holding a message holding a message ... `depth` levels deep."""
    message = make_eml(subject=f"level {depth}", body=phrase)
    for level in range(depth - 1, -1, -1):
        message = make_eml(subject=f"level {level}", body=f"level {level} body", messages=[message])
    return message


@dataclass
class MsgMessage:
    """What `make_msg` writes: an Outlook message and what is attached to it."""

    subject: str
    body: str | None = None
    html: str | None = None
    sender: tuple[str, str] = ("Alice", "alice@example.com")
    to: Sequence[tuple[str, str]] = (("Bob", "bob@example.com"),)
    sent: datetime = datetime(2025, 4, 1, 10, 0, tzinfo=UTC)
    attachments: Sequence[tuple[str, bytes]] = ()
    messages: Sequence[MsgMessage] = ()


def _entry(tag: int, value: bytes) -> bytes:
    return struct.pack("<II", tag, _READABLE_WRITABLE) + value.ljust(8, b"\0")


class _Properties:
    """One object's property stream and the streams of its variable-length values."""

    def __init__(self) -> None:
        self.entries: list[bytes] = []
        self.streams: dict[str, bytes] = {}

    def text(self, prop: int, value: str) -> None:
        data = value.encode("utf-16-le")
        self.variable(prop, _UNICODE, data, len(data) + 2)

    def binary(self, prop: int, data: bytes) -> None:
        self.variable(prop, _BINARY, data, len(data))

    def variable(self, prop: int, kind: int, data: bytes, size: int) -> None:
        tag = prop << 16 | kind
        self.entries.append(_entry(tag, struct.pack("<II", size, 0)))
        self.streams[f"__substg1.0_{tag:08X}"] = data

    def long(self, prop: int, value: int) -> None:
        self.entries.append(_entry(prop << 16 | _LONG, struct.pack("<I", value)))

    def time(self, prop: int, when: datetime) -> None:
        ticks = int((when - _FILETIME_EPOCH).total_seconds() * 10_000_000)
        self.entries.append(_entry(prop << 16 | _TIME, struct.pack("<Q", ticks)))

    def embedded(self, prop: int) -> None:
        self.entries.append(_entry(prop << 16 | _OBJECT, struct.pack("<II", 0xFFFFFFFF, 0)))

    def stream(self, header: bytes) -> bytes:
        return header + b"".join(self.entries)


def _add_message(writer: OleWriter, prefix: list[str], message: MsgMessage, top: bool) -> None:
    add = writer.addEntry
    props = _Properties()
    props.text(0x001A, "IPM.Note")
    props.text(0x0037, message.subject)
    props.text(0x0C1A, message.sender[0])
    props.text(0x5D01, message.sender[1])
    props.text(0x0E04, "; ".join(name for name, _ in message.to))
    props.long(0x0E07, 0x1)  # read and sent (no MSGFLAG_UNSENT)
    props.long(0x340D, 0x40000)  # STORE_UNICODE_OK: strings are UTF-16
    props.time(0x0039, message.sent)
    if message.body is not None:
        props.text(0x1000, message.body)
    if message.html is not None:
        props.binary(0x1013, message.html.encode("utf-8"))
    for number, (name, address) in enumerate(message.to):
        recipient = _Properties()
        recipient.text(0x3001, name)
        recipient.text(0x3003, address)
        recipient.text(0x39FE, address)
        recipient.long(0x0C15, _TO)
        _add_object(add, [*prefix, f"__recip_version1.0_#{number:08X}"], recipient, b"\0" * 8)
    attached: list[tuple[str, bytes] | MsgMessage] = [*message.attachments, *message.messages]
    for number, item in enumerate(attached):
        storage = [*prefix, f"__attach_version1.0_#{number:08X}"]
        attachment = _Properties()
        attachment.long(0x0E21, number)
        if isinstance(item, MsgMessage):
            attachment.long(0x3705, _EMBEDDED)
            attachment.text(0x3001, item.subject)
            attachment.embedded(0x3701)
            _add_object(add, storage, attachment, b"\0" * 8)
            _add_message(writer, [*storage, "__substg1.0_3701000D"], item, top=False)
        else:
            name, data = item
            attachment.long(0x3705, _BY_VALUE)
            attachment.text(0x3707, name)
            attachment.text(0x3704, name)
            attachment.binary(0x3701, data)
            _add_object(add, storage, attachment, b"\0" * 8)
    counts = struct.pack("<IIII", len(message.to), len(attached), len(message.to), len(attached))
    header = b"\0" * 8 + counts + (b"\0" * 8 if top else b"")
    _add_object(add, prefix, props, header)


def _add_object(
    add: Callable[[list[str], bytes], None], storage: list[str], props: _Properties, header: bytes
) -> None:
    for name, data in props.streams.items():
        add([*storage, name], data)
    add([*storage, "__properties_version1.0"], props.stream(header))


def make_msg(path: Path, message: MsgMessage) -> Path:
    """Write `message` as an Outlook .msg file."""
    from extract_msg.ole_writer import OleWriter

    writer = OleWriter()
    named = ["__nameid_version1.0"]
    writer.addEntry(named, storage=True)
    for stream in ("00020102", "00030102", "00040102"):
        writer.addEntry([*named, f"__substg1.0_{stream}"], b"")
    _add_message(writer, [], message, top=True)
    writer.write(str(path))
    return path
