"""A file's bytes to its text, by document type: the one place that picks the parser."""

from __future__ import annotations

from dataclasses import dataclass

from rlm_desktop.documents.decoding import decode

COMPRESSED_TYPES = frozenset(("pdf", "docx", "spreadsheet"))
"""Types whose bytes inflate when parsed: a small file can hold gigabytes of work. These are
read in a bounded worker process (see `reader`)."""


@dataclass(frozen=True)
class Extracted:
    """A document's text and what reading it found out."""

    text: str
    encoding: str | None = None
    pages: int | None = None
    notes: tuple[str, ...] = ()


def extract(kind: str, data: bytes) -> Extracted:
    """The text of a file of type `kind`; raises `Unreadable` when it has none to give."""
    if kind == "pdf":
        from rlm_desktop.documents.pdf import extract_pdf

        pdf = extract_pdf(data)
        return Extracted(pdf.text, pages=pdf.pages, notes=pdf.notes)
    if kind == "docx":
        from rlm_desktop.documents.word import extract_docx

        return Extracted(extract_docx(data))
    if kind == "spreadsheet":
        from rlm_desktop.documents.spreadsheet import extract_spreadsheet

        return Extracted(extract_spreadsheet(data)[0])
    decoded = decode(data)
    text = decoded.text
    if kind == "html":
        from rlm_desktop.documents.htmltext import html_to_text

        text = html_to_text(text)
    return Extracted(text, decoded.encoding, notes=decoded.notes())
