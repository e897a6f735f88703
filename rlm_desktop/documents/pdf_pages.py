"""What a PDF text reader (pdfium_text.py, pypdf_text.py) gives back to pdf.py, and the advice
both say when a file defeats them."""

from __future__ import annotations

from dataclasses import dataclass

REPAIR = "re-export it from the program that made it, or repair it (e.g. `qpdf in.pdf out.pdf`)"
PASSWORD = (
    "password-protected PDF; save a copy without the password "
    "(e.g. `qpdf --decrypt --password=... in.pdf out.pdf`) and load that"
)


@dataclass(frozen=True)
class PageTexts:
    """What an extractor read: each page's text (None where it could not be extracted) and the
    1-based numbers of the pages without text that show an image (scanned without OCR)."""

    texts: list[str | None]
    scanned: list[int]


class CannotRead(Exception):
    """PDFium cannot give this file's text (not installed, or the file defeats it): pypdf tries."""


def reason(error: BaseException) -> str:
    """An exception as a short phrase for a message."""
    message = " ".join(str(error).split())
    return message[:120] if message else type(error).__name__
