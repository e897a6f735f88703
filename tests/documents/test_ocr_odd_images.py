"""Damaged and odd images given to OCR: each one is read, or refused in one line, quickly; none
crashes the reader or makes it build a huge page.

RapidOCR 1.4.4, given a page a few pixels high, stretched it to 30 pixels high and padded it to a
quarter of its (stretched) width: 2000 x 1 pixels became a black page of 60,000 x 15,000 before the
detector saw it. Our pipeline reads no line on a page under 8 pixels high.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rlm_desktop.documents import load_paths
from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import ReadSettings, extract
from rlm_desktop.documents.ocr_engine import recognise
from tests.documents.ocr_makers import page_image

LINES = ["Invoice 4471 for the northern region", "total due within thirty days"]


def _png(image: Image.Image, **kwargs: object) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG", **kwargs)
    return out.getvalue()


def _gif(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.convert("P", palette=Image.Palette.ADAPTIVE, colors=16).save(out, "GIF")
    return out.getvalue()


def _sixteen_bit() -> bytes:
    grey = np.asarray(page_image(LINES), dtype=np.uint16) * 257
    image = Image.fromarray(grey)
    assert image.mode.startswith("I;16")
    return _png(image)


def _transparent_text() -> bytes:
    """Black text on a transparent background (as a logo with its words saved from a drawing)."""
    alpha = 255 - np.asarray(page_image(LINES), dtype=np.uint8)
    rgba = np.zeros((*alpha.shape, 4), dtype=np.uint8)
    rgba[:, :, 3] = alpha
    return _png(Image.fromarray(rgba, "RGBA"))


REFUSED = {
    "1x1": (lambda: _png(Image.new("L", (1, 1), 0)), "too small"),
    "20000x3": (lambda: _png(Image.new("L", (20000, 3), 255)), "too small"),
    "20000x8": (lambda: _png(Image.new("L", (20000, 8), 0)), "no text recognised"),
    "8x20000": (lambda: _png(Image.new("1", (8, 20000), 1)), "no text recognised"),
    "all-black": (lambda: _png(Image.new("L", (1200, 800), 0)), "no text recognised"),
    "all-white": (lambda: _png(Image.new("RGB", (1200, 800), "white")), "no text recognised"),
    "transparent": (lambda: _png(Image.new("RGBA", (900, 600), (0, 0, 0, 0))), "no text"),
    "truncated": (lambda: _png(page_image(LINES))[:900], "damaged or unsupported image"),
}
READ = {
    "16-bit png": _sixteen_bit,
    "palette gif": lambda: _gif(page_image(LINES)),
    "rgba, text in the alpha": _transparent_text,
    "grey with alpha": lambda: _png(page_image(LINES).convert("LA")),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_an_odd_image_is_refused_in_one_line(name: str) -> None:
    make, reason = REFUSED[name]

    with pytest.raises(Unreadable) as raised:
        extract("image", make(), ReadSettings())

    message = str(raised.value)
    assert reason in message
    assert "\n" not in message
    assert "Traceback" not in message


@pytest.mark.parametrize("name", list(READ))
def test_an_unusual_but_sound_image_is_read(name: str) -> None:
    extracted = extract("image", READ[name](), ReadSettings())

    squashed = "".join(extracted.text.lower().split())
    assert "northernregion" in squashed, extracted.text
    assert "thirtydays" in squashed, extracted.text


@pytest.mark.parametrize(
    "size", [(0, 40), (40, 0), (1, 1), (2, 2000), (2000, 2), (3, 30000)], ids=str
)
def test_the_engine_reads_nothing_on_a_page_too_thin_for_a_line(size: tuple[int, int]) -> None:
    # RapidOCR raised OpenCV's assertion on (0, 40) and its ResizeImgError on (3, 30000).
    assert recognise(Image.new("L", size, 0)).chars == 0
    assert recognise(Image.new("RGB", size, "white")).chars == 0


def test_a_long_thin_image_is_no_huge_page_in_the_bounded_reader(tmp_path: Path) -> None:
    # 20000 x 8 is scaled to 2000 x 1 (MAX_SIDE); RapidOCR made that a 60,000 x 15,000 page
    # (2.9 GB, 6 s), which the reader's 1 GiB bound turned into "too large for its memory".
    path = tmp_path / "ribbon.png"
    path.write_bytes(_png(Image.new("L", (20000, 8), 0)))

    result = load_paths([path])

    [error] = result.errors
    assert error.message.startswith("no text recognised in this image"), error.message


def test_any_image_mode_is_read_as_it_shows() -> None:
    page = page_image(LINES)
    modes = {
        "1": page.convert("1"),
        "P": page.convert("P"),
        "RGBA": page.convert("RGBA"),
        "LA": page.convert("LA"),
        "CMYK": page.convert("CMYK"),
    }
    texts = {mode: recognise(image).text for mode, image in modes.items()}

    expected = recognise(page).text
    assert "northern" in expected
    assert all(text == expected for text in texts.values()), texts
