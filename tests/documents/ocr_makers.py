"""Builders for the images and scans the OCR tests read, so no binary file is committed.

Text is drawn with DejaVu Sans (Debian's `fonts-dejavu-core`, in the Makefile's package list) in
black on white, as a scanner at 200 dpi would see a printed page.
"""

from __future__ import annotations

import io
import random
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont
from pypdf import PdfReader, PdfWriter

from tests.documents.makers import make_pdf

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
WORDS = [
    "the",
    "quarterly",
    "revenue",
    "rose",
    "by",
    "twelve",
    "percent",
    "while",
    "costs",
    "in",
    "the",
    "northern",
    "region",
    "fell",
    "sharply",
    "after",
    "a",
    "review",
    "of",
    "suppliers",
    "contracts",
    "and",
    "shipping",
]


def text_lines(count: int, words: int = 8, seed: int = 1) -> list[str]:
    """`count` lines of `words` ordinary English words (the same ones for the same seed)."""
    pick = random.Random(seed)
    return [" ".join(pick.choice(WORDS) for _ in range(words)) for _ in range(count)]


def page_image(
    lines: Sequence[str], size: tuple[int, int] = (1200, 700), font_px: int = 34
) -> Image.Image:
    """A greyscale page showing `lines`, one under another from the top left."""
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, font_px)
    for number, line in enumerate(lines):
        draw.text((60, 60 + number * font_px * 2), line, fill=0, font=font)
    return image


def make_image(path: Path, lines: Sequence[str], **kwargs: object) -> Path:
    """Save a page showing `lines` in the format the file name says (.png, .jpg, ...)."""
    image = page_image(lines)
    if path.suffix.lower() in (".jpg", ".jpeg"):
        image.save(path, quality=85, **kwargs)
    else:
        image.save(path, **kwargs)
    return path


def make_tiff(path: Path, pages: Sequence[Sequence[str]]) -> Path:
    """A multi-page TIFF, one frame a page."""
    first, *rest = [page_image(lines) for lines in pages]
    first.save(path, save_all=True, append_images=rest, compression="tiff_deflate")
    return path


def make_scanned_pdf(path: Path, pages: Sequence[Sequence[str]], dpi: int = 200) -> Path:
    """An image-only PDF (no text layer), as a scanner without OCR writes it."""
    first, *rest = [page_image(lines, size=(1654, 1169)) for lines in pages]
    first.save(path, "PDF", resolution=dpi, save_all=True, append_images=rest)
    return path


def make_mixed_pdf(path: Path, typed: Sequence[str], scanned: Sequence[str]) -> Path:
    """Page 1 typed (a text layer), page 2 a scan of `scanned` (an image, no text)."""
    typed_pdf = make_pdf(path.with_suffix(".typed.pdf"), [typed])
    scan_pdf = make_scanned_pdf(path.with_suffix(".scan.pdf"), [scanned])
    writer = PdfWriter()
    for part in (typed_pdf, scan_pdf):
        writer.append(PdfReader(part))
        part.unlink()
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def logo_image(path: Path) -> Path:
    """A picture with no text in it: coloured shapes on a transparent background."""
    image = Image.new("RGBA", (400, 300), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.ellipse((40, 40, 200, 200), fill=(200, 30, 30, 255))
    draw.polygon([(250, 250), (380, 250), (315, 60)], fill=(30, 90, 200, 255))
    image.save(path)
    return path


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims `width` x `height` greyscale pixels, with almost no data after:
    enough for a reader that decodes before it checks to try to allocate it all."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    data = zlib.compress(b"\0" * 64)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", data)
        + _chunk(b"IEND", b"")
    )


def huge_png(width: int, height: int) -> bytes:
    """A complete, valid 1-bit PNG of `width` x `height` white pixels: small on disk (it
    compresses ~1000:1), gigabytes once decoded at 8 bits a pixel."""
    row = b"\0" + b"\xff" * ((width + 7) // 8)
    packer = zlib.compressobj(9)
    out = io.BytesIO()
    block = row * 256
    for _ in range(height // 256):
        out.write(packer.compress(block))
    out.write(packer.compress(row * (height % 256)))
    out.write(packer.flush())
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", out.getvalue())
        + _chunk(b"IEND", b"")
    )


def skewed_scan(lines: Sequence[str], degrees: float = 4.0) -> Image.Image:
    """A page fed into the scanner crooked: turned by `degrees`, the corners filled white."""
    return page_image(lines, size=(1400, 800)).rotate(
        degrees, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255
    )


def photo_page(lines: Sequence[str], seed: int = 3) -> Image.Image:
    """A page photographed rather than scanned: dark blue text on an uneven, grainy, tinted
    background, saved and decoded again as a JPEG."""
    import numpy as np

    width, height = 1300, 760
    x = np.linspace(0, 1, width)[None, :, None]
    y = np.linspace(0, 1, height)[:, None, None]
    light = 235 - 45 * x * y - 20 * (1 - x) * y  # brighter at the top left, as under a lamp
    tint = np.array([1.0, 0.96, 0.88])[None, None, :]
    grain = np.random.default_rng(seed).normal(0, 6, (height, width, 1))
    paper = np.clip(light * tint + grain, 0, 255).astype("uint8")
    image = Image.fromarray(paper, "RGB")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, 32)
    for number, line in enumerate(lines):
        draw.text((70, 70 + number * 66), line, fill=(25, 30, 90), font=font)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=70)
    return Image.open(io.BytesIO(out.getvalue())).convert("RGB")
