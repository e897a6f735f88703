"""A file's bytes to its text, by document type: the one place that picks the parser.

Each reader gives an `Extracted`: the text, and where it has them the named parts of that text
(`Section`: a sheet, a slide, a page, a chapter) as character offsets, so the model can address
them (`context_meta`), and the documents found inside the file (`Inner`: a message's attachments,
an mbox's messages), each loaded as a document of its own with a link to the one that held it.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass

from rlm_desktop.documents.decoding import Unreadable, decode, normalize_newlines
from rlm_desktop.documents.inflate import Inflate
from rlm_desktop.engine.context import ContextSection as Section

COMPRESSED_TYPES = frozenset(
    ("pdf", "docx", "spreadsheet", "slides", "odt", "epub", "rtf", "email", "image")
)
"""Types whose bytes inflate when parsed (or that hold other files): a small file can hold
gigabytes of work. These are read in a bounded worker process (see `reader`)."""


@dataclass(frozen=True, slots=True)
class ReadSettings:
    """What the user chose about reading, for the readers that need it.

    `ocr`: recognise the text of images and of PDF pages that are only images. `depth`: how many
    containers (a message attached to a message) the file being read is inside.
    """

    ocr: bool = True
    depth: int = 0
    ocr_seconds: float = 45.0
    """How long OCR of one file may go on: pages still waiting then are not read (and a note
    says which), so what was read still loads within the reader's bound."""

    def inside(self) -> ReadSettings:
        """The settings for a document found inside the one being read."""
        return dataclasses.replace(self, depth=self.depth + 1)


@dataclass(frozen=True, slots=True)
class Inner:
    """A document found inside another (an attachment, a message of an mbox), already read.

    `name` is its own file name (or a message's subject line); `type` its document type; `size`
    and `sha256` describe its bytes. `extracted` is None when it could not be read, and then
    `reason` says why (the loader lists it as skipped, naming the file that held it).
    """

    name: str
    type: str
    size: int
    sha256: str
    extracted: Extracted | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Extracted:
    """A document's text and what reading it found out.

    A container (an mbox) may give no text of its own and only `inner` documents.
    """

    text: str
    encoding: str | None = None
    pages: int | None = None
    notes: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()
    inner: tuple[Inner, ...] = ()


_READERS: dict[str, str] = {
    "pdf": "rlm_desktop.documents.pdf:extract_pdf",
    "docx": "rlm_desktop.documents.word:extract_docx",
    "spreadsheet": "rlm_desktop.documents.spreadsheet:extract_spreadsheet",
    "slides": "rlm_desktop.documents.slides:extract_slides",
    "odt": "rlm_desktop.documents.opendocument:extract_odt",
    "epub": "rlm_desktop.documents.ebook:extract_epub",
    "rtf": "rlm_desktop.documents.richtext:extract_rtf",
    "email": "rlm_desktop.documents.mail:extract_mail",
    "image": "rlm_desktop.documents.ocr:extract_image",
}
"""Each compressed type's reader, `module:function` taking the file's bytes and giving an
`Extracted`; imported on first use, so loading text files never imports a parser."""

_TAKE_SETTINGS = frozenset(("pdf", "image", "email"))
"""The readers that also take the `ReadSettings` (OCR, or documents inside documents)."""


def extract(
    kind: str,
    data: bytes,
    settings: ReadSettings | None = None,
    inflate: Inflate | None = None,
) -> Extracted:
    """The text of a file of type `kind`, decompressed first where `inflate` says how; raises
    `Unreadable` when it has none to give."""
    if inflate is not None:
        data = inflate.apply(data)
        if kind not in COMPRESSED_TYPES:
            data = normalize_newlines(data)
    reader = _READERS.get(kind)
    if reader is not None:
        module, function = reader.split(":")
        read = getattr(importlib.import_module(module), function)
        extracted: Extracted = (
            read(data, settings or ReadSettings()) if kind in _TAKE_SETTINGS else read(data)
        )
        return extracted
    decoded = decode(data)
    text = decoded.text
    if kind == "html":
        from rlm_desktop.documents.htmltext import html_to_text

        text = html_to_text(text)
    return Extracted(text, decoded.encoding, notes=decoded.notes())


class SectionedText:
    """Text assembled part by part, each part remembered as a `Section` at its offsets.

    Parts are joined by `joiner`.
    """

    def __init__(self, joiner: str = "\n\n") -> None:
        self.joiner = joiner
        self._parts: list[str] = []
        self._length = 0
        self.sections: list[Section] = []

    def _append(self, text: str) -> int:
        if self._parts:
            self._parts.append(self.joiner)
            self._length += len(self.joiner)
        start = self._length
        self._parts.append(text)
        self._length += len(text)
        return start

    def add(
        self,
        kind: str,
        label: str,
        text: str,
        title: str = "",
        ocr_confidence: float | None = None,
    ) -> Section:
        """Append `text` as a section of `kind` named `label`."""
        start = self._append(text)
        section = Section(kind, label, start, start + len(text), title, ocr_confidence)
        self.sections.append(section)
        return section

    @property
    def text(self) -> str:
        """Everything appended so far."""
        return "".join(self._parts)


def sections_between(text: str, separator: str, kind: str) -> tuple[Section, ...]:
    """The parts of `text` between `separator`s, numbered from 1 (a PDF's pages, split on form
    feeds)."""
    sections: list[Section] = []
    start = 0
    for number, part in enumerate(text.split(separator), start=1):
        sections.append(Section(kind, str(number), start, start + len(part)))
        start += len(part) + len(separator)
    return tuple(sections)


__all__ = [
    "COMPRESSED_TYPES",
    "Extracted",
    "Inflate",
    "Inner",
    "ReadSettings",
    "Section",
    "SectionedText",
    "Unreadable",
    "extract",
]
