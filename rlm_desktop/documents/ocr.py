"""Images (.png, .jpg, .tiff, .bmp, .webp) read by OCR, and how recognised text is marked.

Every page whose text was recognised rather than extracted says so twice: its section carries the
confidence (`ocr_confidence`, in `context_meta`), and its text starts with a marker line
(`[text recognised by OCR, confidence 0.97]`) that the model reads in `context`. The document's
notes tell the user how many pages were recognised and how well.

An image is checked before it is decoded: its header gives its size, and one too large to hold
(a decompression bomb: a small file that claims 30,000 x 30,000 pixels) is refused. One too small
to hold text (an icon) is skipped without running OCR, and one in which no text was recognised (a
photo, a logo) is not loaded: it would give the model nothing to read. A TIFF's frames are pages.
"""

from __future__ import annotations

import io
import re
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import Extracted, ReadSettings, SectionedText
from rlm_desktop.documents.ocr_engine import MAX_SIDE, Recognised, recognise

if TYPE_CHECKING:
    from PIL import Image

TURN_ON = "turn OCR on (Settings → Run defaults; on the command line, leave out --no-ocr)"
OCR_OFF = f"an image, and reading text in images (OCR) is turned off; {TURN_ON}"

MAX_PIXELS = 100_000_000
"""Images (or frames) larger than this many pixels are refused before they are decoded."""
MIN_SIDE = 32
"""An image whose sides are both at most this many pixels (an icon) holds no text worth reading."""


@dataclass(frozen=True, slots=True)
class OcrPage:
    """A page's text recognised by OCR: the 1-based page number and what was read."""

    number: int
    recognised: Recognised


def marked(recognised: Recognised) -> str:
    """A recognised page's text as the model sees it: a marker line, then the text."""
    return f"{marker(recognised.confidence or 0.0)}\n{recognised.text}"


def marker(confidence: float) -> str:
    """The line that starts a page whose text was recognised by OCR."""
    return f"[text recognised by OCR, confidence {confidence:.2f}]"


def summary(pages: list[OcrPage], one_image: bool = False) -> str | None:
    """The user's note for the pages that OCR read: how many and how well (the mean confidence
    weighted by characters); None when it read none. `one_image`: the document is one picture."""
    read = [page.recognised for page in pages if page.recognised.chars]
    if not read:
        return None
    chars = sum(page.chars for page in read)
    mean = sum((page.confidence or 0.0) * page.chars for page in read) / chars
    if one_image and len(read) == 1:
        return f"text recognised by OCR (confidence {mean:.2f}), not extracted: it may have errors"
    return (
        f"text recognised by OCR on {len(read)} page{'s' if len(read) != 1 else ''} "
        f"(mean confidence {mean:.2f}), not extracted: it may have errors"
    )


def extract_image(data: bytes, settings: ReadSettings) -> Extracted:
    """The text OCR recognises in an image, each frame a page; `Unreadable` when there is none."""
    if not settings.ocr:
        raise Unreadable(OCR_OFF)
    from PIL import Image, UnidentifiedImageError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DecompressionBombWarning: we check the size ourselves
        try:
            image = Image.open(io.BytesIO(data))
        except Image.DecompressionBombError as error:
            found = re.search(r"\((\d+) pixels\)", str(error))
            raise Unreadable(_too_large(f"{int(found[1]):,} pixels" if found else "")) from None
        except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as error:
            raise Unreadable(_damaged(error)) from None
        with image:
            return _read_frames(image, settings.ocr_seconds)


def _read_frames(image: Image.Image, seconds: float) -> Extracted:
    try:
        count = int(getattr(image, "n_frames", 1))
    except (OSError, ValueError, SyntaxError, EOFError) as error:
        raise Unreadable(_damaged(error)) from None
    if count == 1:
        _check_size(image.size)
        try:
            frame = _prepared(image)
        except (OSError, ValueError, SyntaxError, EOFError) as error:
            raise Unreadable(_damaged(error)) from None
        return _assemble([OcrPage(1, recognise(frame))], 1, [], [], seconds)
    pages: list[OcrPage] = []
    failed: list[str] = []
    late: list[int] = []
    started = time.monotonic()
    for number in range(1, count + 1):
        if time.monotonic() - started > seconds:
            late.append(number)
            continue
        try:
            image.seek(number - 1)
            _check_size(image.size)
            frame = _prepared(image)
        except Unreadable as error:
            failed.append(f"page {number}: {error}")
            continue
        except (OSError, ValueError, SyntaxError, EOFError) as error:  # a damaged frame
            failed.append(f"page {number}: {_damaged(error)}")
            continue
        pages.append(OcrPage(number, recognise(frame)))
    return _assemble(pages, count, failed, late, seconds)


def _check_size(size: tuple[int, int]) -> None:
    width, height = size
    if width * height > MAX_PIXELS:
        raise Unreadable(_too_large(f"{width:,} x {height:,} pixels"))
    if max(width, height) <= MIN_SIDE or min(width, height) < 8:
        raise Unreadable(
            f"too small to hold readable text ({width} x {height} pixels: an icon?); "
            "nothing to load"
        )


def _prepared(frame: Image.Image) -> Image.Image:
    """The frame decoded as the models take it: greyscale or RGB, transparency on white, its
    longest side at most `MAX_SIDE` (JPEGs are decoded at a reduced scale where they can be)."""
    from PIL import Image

    frame.draft("RGB", (MAX_SIDE, MAX_SIDE))  # JPEG only: decode at 1/2, 1/4 or 1/8 size
    frame.load()
    image = frame
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        image = Image.new("RGB", rgba.size, "white")
        image.paste(rgba, mask=rgba.getchannel("A"))
    elif image.mode in ("I", "I;16", "I;16B", "I;16L", "F"):
        image = image.point(lambda value: value / 256).convert("L")
    elif image.mode not in ("L", "RGB"):
        image = image.convert("RGB")
    if max(image.size) > MAX_SIDE:
        image = image.copy() if image is frame else image
        image.thumbnail((MAX_SIDE, MAX_SIDE))
    return image


def _assemble(
    pages: list[OcrPage], count: int, failed: list[str], late: list[int], seconds: float
) -> Extracted:
    read = [page for page in pages if page.recognised.chars]
    if not read:
        if failed:
            raise Unreadable(failed[0])
        if late:
            raise Unreadable(f"OCR ran out of time ({seconds:g} s) before it found text")
        raise Unreadable(
            "no text recognised in this image (a photo, logo or drawing?); nothing to load"
        )
    body = SectionedText()
    for page in read:
        recognised = page.recognised
        body.add("page", str(page.number), marked(recognised), "", recognised.confidence)
    notes = [summary(read, one_image=count == 1) or ""]
    empty = [page.number for page in pages if not page.recognised.chars]
    if empty:
        notes.append(f"no text recognised on page(s) {', '.join(map(str, empty[:10]))}")
    notes.extend(failed[:3])
    if late:
        notes.append(
            f"OCR stopped after {seconds:g} s: page(s) {late[0]}-{late[-1]} not read; "
            "split the file to read them"
        )
    return Extracted(body.text, pages=count, notes=tuple(notes), sections=tuple(body.sections))


def _too_large(size: str) -> str:
    return (
        f"image too large to read ({size + '; ' if size else ''}the limit is {MAX_PIXELS // 1_000_000} megapixels); "
        "scale it down and load that"
    )


def _damaged(error: BaseException) -> str:
    from rlm_desktop.documents.pdf_pages import reason

    why = re.sub(r" <_io\.BytesIO object at 0x[0-9a-f]+>", "", reason(error))
    return f"damaged or unsupported image ({why}); re-save it as PNG and load that"
