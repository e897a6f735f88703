"""A PDF's page texts through pypdf (imported lazily), the fallback extractor.

pypdf is pure Python (5-30 ms a page), so a long document is shared with worker processes
(started with "spawn"; a frozen app must call `multiprocessing.freeze_support()` first thing in
its entry point). Where no process can be started (in the reader's sandbox, reader_sandbox.py), the
pages are read in this process.
"""

from __future__ import annotations

import io
import itertools
import logging
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.pdf_pages import PASSWORD, REPAIR, PageTexts, reason

if TYPE_CHECKING:
    from pypdf import PdfReader

PAGES_PER_WORKER = 64
"""Pages below which starting another process costs more than it saves."""
MAX_WORKERS = 4
"""Processes, this one included, that share one document."""
RANGE_PAGES = 16
"""Pages per unit of work handed to a worker process."""


@contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf logs every repair it attempts; the user gets our one line per file instead."""
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def read_pages(data: bytes) -> PageTexts:
    """Every page's text; `Unreadable` for a damaged or locked file."""
    with _quiet_pypdf():
        reader = _open(data)
        try:
            count = len(reader.pages)
        except Exception as exc:
            raise Unreadable(
                f"damaged PDF: its page list cannot be read ({reason(exc)}); {REPAIR}"
            ) from exc
        if count == 0:
            raise Unreadable(f"damaged or empty PDF: no pages found; {REPAIR}")
        texts = _all_pages(reader, data, count)
        blank = [
            n for n, text in enumerate(texts, start=1) if text is not None and not text.strip()
        ]
        return PageTexts(texts, [n for n in blank if _has_image(reader, n)])


def _open(data: bytes) -> PdfReader:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except Exception as exc:
        raise Unreadable(f"damaged PDF ({reason(exc)}); {REPAIR}") from exc
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except DependencyError as exc:
            raise Unreadable(
                f"encrypted PDF that needs an extra package ({reason(exc)}); "
                "install it into the app's environment"
            ) from exc
        except Exception as exc:
            raise Unreadable(
                f"encrypted PDF that cannot be opened ({reason(exc)}); {PASSWORD}"
            ) from exc
        if not opened:
            raise Unreadable(PASSWORD)
    return reader


def _has_image(reader: PdfReader, number: int) -> bool:
    """True when page `number` (1-based) shows an image: a page scanned without OCR."""
    try:
        return len(reader.pages[number - 1].images) > 0
    except Exception:  # an image list that cannot be read says nothing either way
        return False


def _page_range(reader: PdfReader, start: int, stop: int) -> list[str | None]:
    """The text of pages [start, stop); None for a page whose text cannot be extracted."""
    texts: list[str | None] = []
    for index in range(start, stop):
        try:
            texts.append(reader.pages[index].extract_text(extraction_mode="plain").rstrip())
        except Exception:
            texts.append(None)
    return texts


_child_reader: PdfReader | None = None


def _child_open(data: bytes) -> None:
    """Worker process start-up: open the PDF once for all the ranges this worker will take."""
    global _child_reader
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.CRITICAL)
    _child_reader = PdfReader(io.BytesIO(data), strict=False)
    if _child_reader.is_encrypted:
        _child_reader.decrypt("")


def _child_range(start: int, stop: int) -> list[str | None]:
    """Runs in a worker process: extract a range of the PDF opened by `_child_open`."""
    assert _child_reader is not None
    return _page_range(_child_reader, start, stop)


def _all_pages(reader: PdfReader, data: bytes, count: int) -> list[str | None]:
    """Every page's text: a long document is shared with worker processes, one per spare core,
    in small ranges that whoever is free takes next."""
    workers = min(os.cpu_count() or 1, MAX_WORKERS, count // PAGES_PER_WORKER)
    if workers < 2:
        return _page_range(reader, 0, count)
    bounds = list(range(0, count, RANGE_PAGES)) + [count]
    ranges = list(itertools.pairwise(bounds))
    texts: dict[int, list[str | None]] = {}
    # "spawn": forking a process that runs Qt threads is unsafe.
    context = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(
            max_workers=workers - 1, mp_context=context, initializer=_child_open, initargs=(data,)
        ) as pool:
            futures = [pool.submit(_child_range, *pages) for pages in ranges]
            for i, future in enumerate(futures):
                if future.cancel():  # not yet taken by a worker: do it here
                    texts[i] = _page_range(reader, *ranges[i])
            for i, future in enumerate(futures):
                if i not in texts:
                    texts[i] = future.result()
    except Exception:  # no worker processes here (sandbox, frozen app): finish in-process
        for i, pages in enumerate(ranges):
            if i not in texts:
                texts[i] = _page_range(reader, *pages)
    return [text for i in range(len(ranges)) for text in texts[i]]
