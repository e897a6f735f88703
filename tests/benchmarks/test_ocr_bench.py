"""OCR benchmarks: scanned A4 pages at 200 dpi with 30 lines of text, on this CPU.

Pages per second through `extract` (this process, the engine built once beforehand) and through
`load_paths` (the bounded reader process at its default memory bound: its start, the engine's
imports and models, then the pages), the confidence the engine gave the page, and the peak
resident memory of the reader process (and of this one, which built the engine too). No timing
is asserted. Run with `make bench`.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rlm_desktop.documents import load_paths
from rlm_desktop.documents.extract import ReadSettings, extract
from tests.benchmarks.report import record_figure
from tests.documents.ocr_makers import page_image, text_lines

pytestmark = pytest.mark.bench

A4_200DPI = (1654, 2339)
PAGES = 3


def _scan(path: Path, pages: int) -> Path:
    images = [page_image(text_lines(30, seed=n), A4_200DPI, font_px=34) for n in range(pages)]
    first, *rest = images
    first.save(path, "PDF", resolution=200, save_all=True, append_images=rest)
    return path


def _peak_mb(who: str) -> float | None:
    """The peak resident memory of this process ("self") or of its ended children, in MB."""
    try:
        import resource
    except ImportError:  # not Unix
        return None
    which = resource.RUSAGE_SELF if who == "self" else resource.RUSAGE_CHILDREN
    return resource.getrusage(which).ru_maxrss / 1024


def test_ocr_pages_per_second(tmp_path: Path) -> None:
    png = tmp_path / "page.png"
    page_image(text_lines(30), A4_200DPI, font_px=34).save(png)
    extract("image", png.read_bytes(), ReadSettings())  # build the engine
    started = time.perf_counter()
    image = extract("image", png.read_bytes(), ReadSettings())
    one_page = time.perf_counter() - started
    confidence = image.sections[0].ocr_confidence
    assert confidence is not None

    pdf = _scan(tmp_path / "scan.pdf", PAGES)
    started = time.perf_counter()
    in_process = extract("pdf", pdf.read_bytes(), ReadSettings())
    pdf_s = time.perf_counter() - started
    started = time.perf_counter()
    [document] = load_paths([pdf]).documents
    loaded_s = time.perf_counter() - started
    assert in_process.pages == document.pages == PAGES

    record_figure(
        "ocr", "A4 page at 200 dpi, 30 lines (image, extract)", f"{1 / one_page:.2f} pages/s"
    )
    record_figure("ocr", "confidence on that page", f"{confidence:.3f}")
    record_figure(
        "ocr", f"{PAGES}-page scanned PDF (extract)", f"{PAGES / pdf_s:.2f} pages/s", "render + OCR"
    )
    record_figure(
        "ocr",
        f"{PAGES}-page scanned PDF (load_paths)",
        f"{PAGES / loaded_s:.2f} pages/s",
        f"{loaded_s:.1f} s with the reader's start and the engine's build",
    )
    reader, here = _peak_mb("children"), _peak_mb("self")
    if reader is not None and here is not None:
        record_figure(
            "ocr",
            "peak resident memory: the reader / this process",
            f"{reader:.0f} MB / {here:.0f} MB",
        )
