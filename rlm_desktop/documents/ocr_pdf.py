"""A PDF's scanned pages (an image and no text layer) rendered by PDFium and read by OCR.

Each page is rendered in greyscale at `DPI`, or smaller where that would pass the engine's
`MAX_SIDE` (a page the size of a poster, or a scan saved at 72 dpi, is as large as it claims), so
a page costs at most a few megabytes to render whatever its size. A page that cannot be rendered
or read costs only itself; pages still waiting when `ReadSettings.ocr_seconds` have passed are not read,
so the rest of the file still loads within the reader's time bound.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rlm_desktop.documents.ocr import OcrPage
from rlm_desktop.documents.ocr_engine import MAX_SIDE, Recognised, recognise
from rlm_desktop.documents.pdf_pages import reason

if TYPE_CHECKING:
    import pypdfium2

DPI = 200
"""Resolution scanned pages are rendered at (before the `MAX_SIDE` cap)."""


@dataclass
class PdfOcr:
    """What OCR made of a PDF's scanned pages (1-based numbers)."""

    pages: list[OcrPage] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    late: list[int] = field(default_factory=list)
    cannot: str | None = None
    """Why no page could be rendered at all (PDFium cannot open the file)."""


def scale_for(width: float, height: float) -> float:
    """PDFium's render scale for a page of `width` x `height` points."""
    longest = max(width, height, 1.0)
    return min(DPI / 72, MAX_SIDE / longest)


def recognise_pages(data: bytes, numbers: list[int], seconds: float) -> PdfOcr:
    """Render and OCR the pages `numbers` of the PDF in `data`, starting none after `seconds`."""
    result = PdfOcr()
    try:
        import pypdfium2
    except (ImportError, OSError) as error:
        result.cannot = f"PDFium (pypdfium2) cannot be imported ({reason(error)})"
        return result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            document = pypdfium2.PdfDocument(data)
        except Exception as error:
            result.cannot = f"PDFium cannot open it ({reason(error)})"
            return result
        try:
            started = time.monotonic()
            for number in numbers:
                if time.monotonic() - started > seconds:
                    result.late.append(number)
                    continue
                try:
                    result.pages.append(OcrPage(number, _read_page(document, number)))
                except Exception:  # a page that cannot be rendered costs only itself
                    result.failed.append(number)
        finally:
            document.close()
    return result


def _read_page(document: pypdfium2.PdfDocument, number: int) -> Recognised:
    page = document[number - 1]
    try:
        width, height = page.get_size()
        bitmap = page.render(scale=scale_for(width, height), grayscale=True)
        try:
            return recognise(bitmap.to_pil())
        finally:
            bitmap.close()
    finally:
        page.close()
