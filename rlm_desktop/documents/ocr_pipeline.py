"""PP-OCR from page to lines, step for step as RapidOCR 1.4.4 runs it (without its line
classifier), on onnxruntime, numpy, PIL, shapely and pyclipper: no OpenCV.

A page longer than `max_side` is first scaled down, and one shorter than 30 pixels up (sides to
multiples of 32); a low or very wide one is padded above and below with black so the detector
sees a page-like shape. Boxes are found on a copy at most `detect_side` long, read on crops of the
page, and given back in the page's own pixels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rlm_desktop.documents.ocr_detect import detect
from rlm_desktop.documents.ocr_images import as_array, crop, resize
from rlm_desktop.documents.ocr_models import Models
from rlm_desktop.documents.ocr_read import read

if TYPE_CHECKING:
    from PIL import Image

MIN_SIDE = 30
MIN_HEIGHT = 30
THINNEST = 8
"""A page less than this many pixels high or wide (once at most `max_side` long) holds no line
that could be read; stretching it to `MIN_SIDE` would only make a huge, empty page."""
WIDE = 8
"""A page wider than this many times its height is padded to a more page-like shape."""


@dataclass(frozen=True, slots=True)
class Line:
    """One box of text: its four corners (x, y) in the page's pixels, its text and score."""

    points: list[list[float]]
    text: str
    score: float


@dataclass(frozen=True)
class Pipeline:
    """The models and the sizes they are given pages at; `read` is the whole of OCR on a page."""

    models: Models
    max_side: int
    detect_side: int
    min_score: float

    def read(self, image: Image.Image) -> list[Line]:
        """The text boxes of `image` read with at least `min_score`, top to bottom."""
        original = as_array(image)
        fitted = _fitted(original, self.max_side)
        if fitted is None:
            return []
        page, ratio_h, ratio_w = fitted
        padded, top = _letterboxed(page)
        boxes = detect(self.models.detector, padded, self.detect_side)
        if not boxes:
            return []
        crops = [crop(padded, box) for box in boxes]
        texts = read(self.models.recogniser, self.models.characters, crops)
        height, width = original.shape[:2]
        lines = []
        for box, (text, score) in zip(boxes, texts, strict=True):
            if score < self.min_score:
                continue
            points = box.astype(np.float32)
            points[:, 1] -= top
            points[:, 0] *= ratio_w
            points[:, 1] *= ratio_h
            points = np.maximum(points, 0)
            points[:, 0] = np.minimum(points[:, 0], width)
            points[:, 1] = np.minimum(points[:, 1], height)
            lines.append(Line(points.tolist(), text, score))
        return lines


def _fitted(image: np.ndarray, max_side: int) -> tuple[np.ndarray, float, float] | None:
    """`image` at most `max_side` and at least `MIN_SIDE` pixels a side (RapidOCR's
    `reduce_max_side` and `increase_min_side`), and the ratios back to its own size; None when
    it is thinner than `THINNEST` at that size."""
    ratio_h = ratio_w = 1.0
    height, width = image.shape[:2]
    shrink = min(1.0, float(max_side) / max(height, width, 1))
    if min(height, width) * shrink < THINNEST:
        return None
    if shrink < 1.0:
        image, ratio_h, ratio_w = _scaled(image, shrink)
    height, width = image.shape[:2]
    if min(height, width) < MIN_SIDE:
        image, ratio_h, ratio_w = _scaled(image, float(MIN_SIDE) / min(height, width))
    return image, ratio_h, ratio_w


def _scaled(image: np.ndarray, ratio: float) -> tuple[np.ndarray, float, float]:
    """`image` scaled by `ratio`, its sides rounded to multiples of 32 (at least 32: RapidOCR
    failed on a side that rounded to nothing)."""
    height, width = image.shape[:2]
    target_h = max(32, int(round(int(height * ratio) / 32) * 32))
    target_w = max(32, int(round(int(width * ratio) / 32) * 32))
    return resize(image, target_w, target_h), height / target_h, width / target_w


def _letterboxed(image: np.ndarray) -> tuple[np.ndarray, int]:
    """`image` with black bands above and below when it is low or very wide, and their height."""
    height, width = image.shape[:2]
    if height > MIN_HEIGHT and width / height <= WIDE:
        return image, 0
    band = int(abs(max(int(width / WIDE), MIN_HEIGHT) * 2 - height) / 2)
    padded = np.zeros((height + 2 * band, width, image.shape[2]), dtype=np.uint8)
    padded[band : band + height] = image
    return padded, band
