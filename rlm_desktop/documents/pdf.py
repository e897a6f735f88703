"""PDF text, page by page: PDFium (pypdfium2) reads it, pypdf where PDFium cannot.

PDFium is native and about ten times faster than pypdf on typeset text (and better at it: spaces
from glyph positions, ligatures, hyphenation at line ends). pypdf takes over when pypdfium2 cannot
be imported or PDFium cannot open the file or get any page's text; the document then says so in a
note. Either way one bad page never costs the others, and a damaged or locked file gives one line
saying what to do.

A page that shows an image and no text (a scan) is rendered and read by OCR when the user has OCR
on (`ocr_pdf`): its text is marked as recognised and its section carries the confidence. With OCR
off, or where PDFium cannot render the file, such pages are named as needing OCR.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import Extracted, ReadSettings, sections_between
from rlm_desktop.documents.ocr import TURN_ON
from rlm_desktop.documents.pdf_pages import REPAIR, CannotRead, PageTexts

if TYPE_CHECKING:
    from rlm_desktop.documents.ocr_pdf import PdfOcr

log = logging.getLogger(__name__)

OCR = "run OCR first (e.g. `ocrmypdf in.pdf out.pdf`)"


def extract_pdf(data: bytes, settings: ReadSettings) -> Extracted:
    """The text of every page, joined by form feeds, each page a section, scanned pages read by
    OCR when `settings.ocr`; raise `Unreadable` for damaged, locked or unreadable scanned files."""
    if b"%PDF-" not in data[:1024]:
        raise Unreadable(f"not a PDF file (no %PDF header); {REPAIR}")
    notes: list[str] = []
    cannot_render: str | None = None
    try:
        from rlm_desktop.documents.pdfium_text import read_pages

        pages = read_pages(data)
    except CannotRead as error:
        log.info("PDFium cannot read this PDF (%s); reading it with pypdf", error)
        from rlm_desktop.documents.pypdf_text import read_pages as read_with_pypdf

        pages = read_with_pypdf(data)
        notes.append(f"read with pypdf: {error}")
        cannot_render = str(error)
    if not pages.scanned or not settings.ocr:
        return _result(pages, notes, None)
    if cannot_render is not None:
        return _result(pages, notes, f"OCR cannot render them: {cannot_render}")
    from rlm_desktop.documents.ocr_pdf import recognise_pages

    recognised = recognise_pages(data, pages.scanned, settings.ocr_seconds)
    if recognised.cannot is not None:
        return _result(pages, notes, f"OCR cannot render them: {recognised.cannot}")
    return _with_ocr(pages, notes, recognised)


def _result(pages: PageTexts, notes: list[str], why_not: str | None) -> Extracted:
    """The extracted text; scanned pages named as needing OCR (`why_not`: why OCR did not read
    them although it is on; None: OCR is off)."""
    texts, count = pages.texts, len(pages.texts)
    if all(text is None for text in texts):
        raise Unreadable(f"damaged PDF: no page's text could be extracted; {REPAIR}")
    fix = f"{TURN_ON}, or {OCR}" if why_not is None else f"{why_not}; {OCR}"
    if not any(text and text.strip() for text in texts):
        pages_word = f"{count} page{'s' if count != 1 else ''}"
        if pages.scanned:
            raise Unreadable(
                f"needs OCR: no text layer ({pages_word}, probably scanned images); "
                f"{fix} and load it again"
            )
        raise Unreadable(
            f"no text found ({pages_word} with neither text nor images: blank, text drawn as "
            f"outlines, or content too large to read); if it shows text, {OCR} and load the result"
        )
    _note_failed(texts, notes)
    if pages.scanned:
        notes.append(
            f"needs OCR: no text layer on {_pages(pages.scanned)} (scanned images); "
            f"{fix} to read them"
        )
    text = "\f".join(text or "" for text in texts)
    return Extracted(
        text, pages=count, notes=tuple(notes), sections=sections_between(text, "\f", "page")
    )


def _with_ocr(pages: PageTexts, notes: list[str], ocr: PdfOcr) -> Extracted:
    """The extracted pages as they are, the scanned ones replaced by what OCR recognised."""
    from rlm_desktop.documents.ocr import marked, summary

    texts = list(pages.texts)
    if all(text is None for text in texts):
        raise Unreadable(f"damaged PDF: no page's text could be extracted; {REPAIR}")
    confidence: dict[int, float | None] = {}
    for page in ocr.pages:
        if page.recognised.chars:
            texts[page.number - 1] = marked(page.recognised)
            confidence[page.number] = page.recognised.confidence
    count = len(texts)
    if not any(text and text.strip() for text in texts):
        pages_word = f"{count} page{'s' if count != 1 else ''}"
        if ocr.late and not ocr.pages:
            raise Unreadable(f"OCR ran out of time on its {pages_word} (scanned images)")
        raise Unreadable(
            f"no text recognised: OCR found no text on its {pages_word} (scanned images: blank, "
            "photos or drawings?); nothing to load"
        )
    _note_failed(texts, notes)
    if (done := summary(ocr.pages)) is not None:
        notes.append(done)
    empty = [page.number for page in ocr.pages if not page.recognised.chars]
    if empty:
        notes.append(f"no text recognised by OCR on {_pages(empty)} (scanned images)")
    if ocr.failed:
        notes.append(f"OCR could not render {_pages(ocr.failed)}; {REPAIR}")
    if ocr.late:
        notes.append(
            f"OCR stopped at its time limit: {_pages(ocr.late)} not read; "
            "split the file (or run `ocrmypdf in.pdf out.pdf`) to read them"
        )
    text = "\f".join(text or "" for text in texts)
    sections = tuple(
        dataclasses.replace(section, ocr_confidence=confidence[number])
        if number in confidence
        else section
        for number, section in enumerate(sections_between(text, "\f", "page"), start=1)
    )
    return Extracted(text, pages=count, notes=tuple(notes), sections=sections)


def _note_failed(texts: list[str | None], notes: list[str]) -> None:
    failed = [number for number, text in enumerate(texts, start=1) if text is None]
    if failed:
        notes.append(f"text of {len(failed)} page(s) could not be extracted: {_numbers(failed)}")


def _pages(numbers: list[int]) -> str:
    return ("page " if len(numbers) == 1 else "pages ") + _numbers(numbers)


def _numbers(pages: list[int]) -> str:
    return ", ".join(map(str, pages[:10])) + (" ..." if len(pages) > 10 else "")
