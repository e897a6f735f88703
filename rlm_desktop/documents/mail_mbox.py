"""An mbox file's bytes to the bytes of its messages, one at a time, without a temporary file
(`mailbox.mbox` reads only from a path).

A message starts at a "From " line that opens the file or follows an empty line (RFC 4155: each
message ends with an empty line), so a body line starting "From " that a writer failed to escape
splits a message only after a blank line. Escaped body lines are unescaped as mboxrd readers do
(">From " to "From ", ">>From " to ">From "), which also restores mboxo's escapes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_START = re.compile(rb"(?:\A|(?<=\n\n)|(?<=\n\r\n))From [^\n]*\n?")
_ESCAPED = re.compile(rb"^>(>*From )", re.MULTILINE)


def looks_like_mbox(data: bytes) -> bool:
    """True when `data` starts as an mbox does: a "From " envelope line."""
    return data.startswith(b"From ")


def messages(data: bytes) -> Iterator[bytes]:
    """The bytes of each message in the mbox `data`, in order, envelope lines removed."""
    starts = _START.finditer(data)
    current = next(starts, None)
    while current is not None:
        following = next(starts, None)
        end = following.start() if following is not None else len(data)
        yield _ESCAPED.sub(rb"\1", data[current.end() : end])
        current = following
