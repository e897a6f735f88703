"""Rich text (.rtf) through striprtf (imported lazily): the document's text without its markup.

striprtf is pure Python and walks the file control word by control word, so a big RTF (pictures
are hex inside the text) takes time in proportion; it runs in the bounded reader like the other
compressed formats, within its time and memory bound. Pictures, fields' codes and other
"destinations" are dropped; a table's cells come out separated by `|`, as striprtf writes them.
"""

from __future__ import annotations

import codecs
import re

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import Extracted

RESAVE = "open it in Word, WordPad or LibreOffice and save it again as .rtf"
_RTF_START = re.compile(rb"\s*\{\\rtf")
_CODE_PAGE = re.compile(rb"\\ansicpg(\d+)")
_DEFAULT_CODE_PAGE = "cp1252"


def _code_page(head: bytes) -> str:
    """The ANSI code page the file's header names, if Python knows it, else Windows-1252."""
    found = _CODE_PAGE.search(head)
    if found is None:
        return _DEFAULT_CODE_PAGE
    name = f"cp{int(found.group(1))}"
    try:
        return codecs.lookup(name).name
    except LookupError:
        return _DEFAULT_CODE_PAGE


def extract_rtf(data: bytes) -> Extracted:
    """The document's text; raise `Unreadable` when the file is not RTF or is damaged."""
    from striprtf.striprtf import rtf_to_text

    if not _RTF_START.match(data.removeprefix(codecs.BOM_UTF8)):
        raise Unreadable(f"not an RTF file (it does not start with {{\\rtf); {RESAVE}")
    encoding = _code_page(data[:4096])
    try:
        rtf = data.decode(encoding, errors="replace")
        text = rtf_to_text(rtf, encoding, errors="replace")  # type: ignore[no-untyped-call]
    except (ValueError, IndexError, LookupError) as error:
        reason = " ".join(str(error).split())[:120] or type(error).__name__
        raise Unreadable(f"damaged .rtf file ({reason}); {RESAVE}") from error
    return Extracted("\n".join(line.rstrip() for line in text.strip("\n").split("\n")))
