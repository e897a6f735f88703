"""A PDF's page texts through PDFium (pypdfium2, imported lazily), the fast extractor.

PDFium's text page orders the characters, puts spaces where the glyph positions leave gaps (so
kerned TJ arrays read as words), expands ligatures and writes lines with CRLF. A word hyphenated
at a line's end comes back joined, the hyphen marked with U+FFFE and the two lines run together;
the word is kept whole and the line break moved after it.
"""

from __future__ import annotations

import re
import warnings
from typing import TYPE_CHECKING

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.pdf_pages import PASSWORD, CannotRead, PageTexts, reason

if TYPE_CHECKING:
    import pypdfium2

IMAGE_DEPTH = 4
"""Form XObjects nested this deep are searched for a scanned page's image."""

_HYPHENATED = re.compile(r"\ufffe(\S*)(?:[ \t]+|\r?\n|\Z)")
_LINE_END = re.compile(r"[ \t]*\r?\n")


def read_pages(data: bytes) -> PageTexts:
    """Every page's text; `CannotRead` when PDFium is missing, cannot open the file or can read
    none of its pages, `Unreadable` when the file needs a password."""
    try:
        import pypdfium2
        import pypdfium2.raw as pdfium_c
    except (ImportError, OSError) as error:  # OSError: the native library did not load
        raise CannotRead(f"PDFium (pypdfium2) cannot be imported ({reason(error)})") from error
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            document = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError as error:
            if getattr(error, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
                raise Unreadable(PASSWORD) from None
            raise CannotRead(f"PDFium cannot open it ({_pdfium_reason(error)})") from error
        try:
            pages = _pages(document, pdfium_c.FPDF_PAGEOBJ_IMAGE)
        finally:
            document.close()
    if all(text is None for text in pages.texts):
        raise CannotRead("PDFium could not read any of its pages")
    return pages


def _pdfium_reason(error: BaseException) -> str:
    """PDFium's own words from pypdfium2's "Failed to load document (PDFium: ...)"."""
    found = re.search(r"PDFium: ([^)]+)", str(error))
    return found[1] if found else reason(error)


def _pages(document: pypdfium2.PdfDocument, image_type: int) -> PageTexts:
    texts: list[str | None] = []
    scanned: list[int] = []
    for index in range(len(document)):
        try:
            page = document[index]
        except Exception:  # a page that cannot be loaded costs only itself
            texts.append(None)
            continue
        try:
            text_page = page.get_textpage()
            try:
                text = tidy(text_page.get_text_range())
            finally:
                text_page.close()
            texts.append(text)
            if not text.strip() and _shows_image(page, image_type):
                scanned.append(index + 1)
        except Exception:
            texts.append(None)
        finally:
            page.close()
    return PageTexts(texts, scanned)


def _shows_image(page: pypdfium2.PdfPage, image_type: int) -> bool:
    """True when the page draws an image, directly or inside a form XObject."""
    try:
        return any(True for _ in page.get_objects(filter=[image_type], max_depth=IMAGE_DEPTH))
    except Exception:  # an object list that cannot be read says nothing either way
        return False


def tidy(text: str) -> str:
    """PDFium's page text with newline line ends, hyphenated words whole and no trailing blanks."""
    text = _HYPHENATED.sub(r"\1\n", text)
    return _LINE_END.sub("\n", text).replace("\r", "\n").rstrip()
