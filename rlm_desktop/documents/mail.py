"""Mail (.eml, .mbox, Outlook .msg) to documents: each message's text, its attachments as
documents of their own.

The format is told by the bytes, not the name: an OLE compound file is an Outlook message
(`mail_msg`), a file starting with a "From " line an mbox (`mail_mbox`), anything else an RFC 822
message (`mail_mime`). A message's text is its headers (From, To, Cc, Date, Subject, and
Message-ID / In-Reply-To for following threads), an empty line, its body (text/plain, else the
HTML one as text) and an `Attachments:` line naming every attachment, with why when one was not
read. Each readable attachment is read here, in the same bounded worker, and comes back as an
`Inner` document (`mail.eml/report.pdf`, linked to its message); an attached message is read the
same way, its own attachments becoming its inner documents.

An mbox gives one document per message (`0001 Subject`), not one per thread: a message is what
can be quoted and dated, threads rebuilt from In-Reply-To/References or subjects are often wrong
(clients drop the headers, subjects change), and one document per thread would repeat the text
each reply quotes. The headers kept in each message's text let the model follow a thread. An
mbox of one message (a message saved with its envelope line) is that message, as a .eml is.

Mail is untrusted input, so every file costs bounded work whatever it holds: a message inside
`MAX_DEPTH` others gives its text but its attachments are not read; at most `MAX_ATTACHMENTS` of
a message's attachments are read, and at most `MAX_DOCUMENTS` documents (messages and
attachments) come from one file. What a bound left out is one skipped line and a note.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path

from rlm_desktop.documents import formats
from rlm_desktop.documents.decoding import Unreadable, normalize_newlines
from rlm_desktop.documents.extract import COMPRESSED_TYPES, Extracted, Inner, ReadSettings, extract
from rlm_desktop.documents.inflate import Inflate
from rlm_desktop.documents.mail_mbox import looks_like_mbox, messages
from rlm_desktop.documents.mail_message import Attachment, Message
from rlm_desktop.documents.mail_mime import read_mime
from rlm_desktop.documents.model import MIB, human_size
from rlm_desktop.documents.package import OLE_MAGIC

MAX_DEPTH = 5
"""A message nested in this many containers (messages, an mbox) is read, its attachments not:
real mail forwards a message inside a message a few times, never five."""

MAX_ATTACHMENTS = 200
"""Attachments read from one message; real mail carries a handful, a hostile one thousands."""

MAX_DOCUMENTS = 10_000
"""Messages and attachments read from one file: a large personal mbox (years of mail), read
within the per-file time limit (the mail benchmark measures a 1,000-message mbox)."""

_SUBJECT_CHARS = 80
_SAVE_APART = "save it from the message and load it on its own"
INFLATED_ATTACHMENT_BYTES = 256 * MIB
"""The most a compressed attachment (`app.log.1.gz`) may inflate to: the default per-file limit."""


@dataclass
class _Budget:
    """The documents one file may still give (`MAX_DOCUMENTS` in all)."""

    left: int = field(default_factory=lambda: MAX_DOCUMENTS)

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def extract_mail(data: bytes, settings: ReadSettings) -> Extracted:
    """A message's text with its attachments as inner documents, or an mbox's messages as inner
    documents; raises `Unreadable` for a damaged file or one that holds no mail."""
    return _read(data, settings, _Budget())


def _read(data: bytes, settings: ReadSettings, budget: _Budget) -> Extracted:
    if looks_like_mbox(data):
        return _mbox(data, settings, budget)
    return _message(_open(data, settings, budget), settings, budget)


def _open(data: bytes, settings: ReadSettings, budget: _Budget) -> Message:
    """The message in `data` with as many attachments as the bounds let be read."""
    limit = 0 if settings.depth >= MAX_DEPTH else min(MAX_ATTACHMENTS, budget.left)
    if data.startswith(OLE_MAGIC):
        from rlm_desktop.documents.mail_msg import read_msg

        return read_msg(data, limit)
    return read_mime(data, limit)


def _message(message: Message, settings: ReadSettings, budget: _Budget) -> Extracted:
    inner: list[Inner] = []
    listed: list[str] = []
    for attachment in message.attachments:
        if not budget.take():
            break
        found = _attachment(attachment, settings, budget)
        inner.append(found)
        listed.append(found.name if found.reason is None else f"{found.name} ({_short(found)})")
    notes = list(message.notes)
    unread = message.count - len(inner)
    if unread:
        why = _why_unread(settings, len(inner))
        noun = "attachment" if unread == 1 else "attachments"
        inner.append(Inner(f"{unread:,} more {noun}", "email", 0, "", reason=f"not read: {why}"))
        listed.append(f"{unread:,} more, not read")
        notes.append(f"{unread:,} {noun} not read: {why}")
    blocks = ["\n".join(f"{name}: {value}" for name, value in message.headers), message.body]
    if listed:
        blocks.append(f"Attachments: {', '.join(listed)}")
    text = "\n\n".join(block for block in blocks if block) + "\n"
    return Extracted(text, notes=tuple(notes), inner=tuple(inner))


def _why_unread(settings: ReadSettings, read: int) -> str:
    if settings.depth >= MAX_DEPTH:
        return (
            f"the message is inside {settings.depth} others (messages or a mailbox), the most "
            f"that are opened; {_SAVE_APART}"
        )
    if read >= MAX_ATTACHMENTS:
        return f"only a message's first {MAX_ATTACHMENTS} attachments are read; {_SAVE_APART}"
    return f"one file gives at most {MAX_DOCUMENTS:,} documents (messages and attachments)"


def _short(found: Inner) -> str:
    return f"not read: {(found.reason or '').split(';')[0]}"


def _attachment(attachment: Attachment, settings: ReadSettings, budget: _Budget) -> Inner:
    name, data = attachment.name, attachment.data
    size = len(data or b"")
    digest = hashlib.sha256(data or b"").hexdigest()
    if data is None:
        return Inner(name, "email", size, digest, reason=attachment.reason)
    kind = "email" if attachment.message else formats.type_for(Path(name)) or "text"
    refused = None if attachment.message else formats.refusal(Path(name))
    if refused is None and not data:
        refused = "empty attachment (0 bytes)"
    if refused is None and kind == "image" and not settings.ocr:
        refused = "an image, and reading text in images (OCR) is turned off in the settings"
    if refused is not None:
        return Inner(name, kind, size, digest, reason=refused)
    try:
        inflate = None if attachment.message else _inflate(name)
        extracted = _extract(kind, data, settings.inside(), budget, inflate)
    except Unreadable as error:
        return Inner(name, kind, size, digest, reason=str(error))
    except MemoryError:
        raise
    except Exception as error:  # a parser's bug costs one attachment, not the message
        reason = (
            f"could not read it ({type(error).__name__}: {str(error)[:100]}); please report this"
        )
        return Inner(name, kind, size, digest, reason=reason)
    if extracted.text.strip() or extracted.inner:
        return Inner(name, kind, size, digest, extracted)
    return Inner(name, kind, size, digest, reason="no text in it (only whitespace)")


def _inflate(name: str) -> Inflate | None:
    compression = None if not name else formats.compression(Path(name))
    if compression is None:
        return None
    limit = human_size(INFLATED_ATTACHMENT_BYTES)
    too_big = (
        f"inflates past {limit} when decompressed; the limit is {limit} an attachment; "
        f"{_SAVE_APART}"
    )
    return Inflate(compression, INFLATED_ATTACHMENT_BYTES, too_big)


def _extract(
    kind: str, data: bytes, settings: ReadSettings, budget: _Budget, inflate: Inflate | None
) -> Extracted:
    if inflate is not None:
        data = inflate.apply(data)
    if kind == "email":
        return _read(data, settings, budget)
    if kind not in COMPRESSED_TYPES:
        data = normalize_newlines(data)
    return extract(kind, data, settings)


def _mbox(data: bytes, settings: ReadSettings, budget: _Budget) -> Extracted:
    chunks = messages(data)
    first, second = next(chunks, b""), next(chunks, None)
    if second is None:  # a saved message that starts with an envelope line is that message
        return _message(_open(first, settings, budget), settings, budget)
    inner: list[Inner] = []
    unread = 0
    inside = settings.inside()
    for number, chunk in enumerate(itertools.chain((first, second), chunks), start=1):
        if not budget.take():
            unread += 1
            continue
        size, digest = len(chunk), hashlib.sha256(chunk).hexdigest()
        try:
            message = _open(chunk, inside, budget)
        except Unreadable as error:
            inner.append(Inner(f"{number:04d}", "email", size, digest, reason=str(error)))
            continue
        subject = message.header("Subject").replace("/", "-").replace("\\", "-")
        name = f"{number:04d} {subject[:_SUBJECT_CHARS].strip() or '(no subject)'}"
        extracted = _message(message, inside, budget)
        inner.append(Inner(name, "email", size, digest, extracted))
    if not any(found.extracted for found in inner):
        why = next((found.reason for found in inner if found.reason), "no messages in it")
        raise Unreadable(f"no message in this mailbox could be read ({why})")
    if unread:
        why = f"one file gives at most {MAX_DOCUMENTS:,} documents; split the mailbox to read the rest"
        noun = "message" if unread == 1 else "messages"
        inner.append(Inner(f"{unread:,} more {noun}", "email", 0, "", reason=f"not read: {why}"))
    return Extracted("", inner=tuple(inner))
