"""PDF text, page by page: PDFium (pypdfium2) reads it, pypdf where PDFium cannot.

PDFium is native and about ten times faster than pypdf on typeset text (and better at it: spaces
from glyph positions, ligatures, hyphenation at line ends). pypdf takes over when pypdfium2 cannot
be imported or PDFium cannot open the file or get any page's text; the document then says so in a
note. Either way one bad page never costs the others, a page that shows an image and no text is
reported as needing OCR, and a damaged or locked file gives one line saying what to do.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.pdf_pages import REPAIR, CannotRead, PageTexts

log = logging.getLogger(__name__)

OCR = "run OCR first (e.g. `ocrmypdf in.pdf out.pdf`)"


@dataclass(frozen=True)
class PdfText:
    """The pages' text, joined by form feeds, and what went wrong on the way."""

    text: str
    pages: int
    notes: tuple[str, ...] = ()


def extract_pdf(data: bytes) -> PdfText:
    """Extract the text of every page; raise `Unreadable` for damaged, locked or scanned files."""
    if b"%PDF-" not in data[:1024]:
        raise Unreadable(f"not a PDF file (no %PDF header); {REPAIR}")
    notes: list[str] = []
    try:
        from rlm_desktop.documents.pdfium_text import read_pages

        pages = read_pages(data)
    except CannotRead as error:
        log.info("PDFium cannot read this PDF (%s); reading it with pypdf", error)
        from rlm_desktop.documents.pypdf_text import read_pages as read_with_pypdf

        pages = read_with_pypdf(data)
        notes.append(f"read with pypdf: {error}")
    return _result(pages, notes)


def _result(pages: PageTexts, notes: list[str]) -> PdfText:
    texts, count = pages.texts, len(pages.texts)
    if all(text is None for text in texts):
        raise Unreadable(f"damaged PDF: no page's text could be extracted; {REPAIR}")
    if not any(text and text.strip() for text in texts):
        pages_word = f"{count} page{'s' if count != 1 else ''}"
        if pages.scanned:
            raise Unreadable(
                f"needs OCR: no text layer ({pages_word}, probably scanned images); "
                f"{OCR} and load the result"
            )
        raise Unreadable(
            f"no text found ({pages_word} with neither text nor images: blank, text drawn as "
            f"outlines, or content too large to read); if it shows text, {OCR} and load the result"
        )
    failed = [number for number, text in enumerate(texts, start=1) if text is None]
    if failed:
        notes.append(f"text of {len(failed)} page(s) could not be extracted: {_numbers(failed)}")
    if pages.scanned:
        which = ("page " if len(pages.scanned) == 1 else "pages ") + _numbers(pages.scanned)
        notes.append(f"needs OCR: no text layer on {which} (scanned images); {OCR} to read them")
    return PdfText("\f".join(text or "" for text in texts), count, tuple(notes))


def _numbers(pages: list[int]) -> str:
    return ", ".join(map(str, pages[:10])) + (" ..." if len(pages) > 10 else "")
