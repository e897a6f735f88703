"""Where the text is: PP-OCR's DB detector and its post-processing, as RapidOCR 1.4.4 runs them
(`ch_ppocr_det`), with OpenCV's parts replaced (see `ocr_images`, `ocr_regions`).

The detector sees a copy of the page at most `side` pixels long (sides rounded to multiples of
32), gives each pixel a probability of being text, and each patch of likely pixels (widened by a
pixel, RapidOCR's dilation) becomes the smallest rotated rectangle around it; one whose mean
probability is too low is dropped, the rest are grown by `UNCLIP_RATIO` (the model was trained on
shrunken boxes) and mapped back to the page's pixels.
"""

from __future__ import annotations

import numpy as np

from rlm_desktop.documents.ocr_images import resize
from rlm_desktop.documents.ocr_models import Model
from rlm_desktop.documents.ocr_rectangle import min_area_box, patch_hull, path_hull
from rlm_desktop.documents.ocr_regions import patches

THRESH = 0.3
"""A pixel is text when the detector gives it at least this probability."""
BOX_THRESH = 0.5
"""A patch is kept when its rectangle's mean probability is at least this."""
MAX_CANDIDATES = 1000
UNCLIP_RATIO = 1.6
MIN_SIZE = 3
"""Rectangles narrower than this (in the detector's pixels) are no text."""


def detect(model: Model, image: np.ndarray, side: int) -> list[np.ndarray]:
    """The text boxes in `image` (four corners each, clockwise from the top left, float32),
    top to bottom and left to right; none when the image is too small to look at."""
    height, width = image.shape[:2]
    batch = _prepared(image, side)
    if batch is None:
        return []
    probability = model.run(batch)[0, 0]
    ordered = (_ordered(box, width, height) for box in _boxes(probability, width, height))
    return sorted_boxes([box for box in ordered if box is not None])


def _prepared(image: np.ndarray, side: int) -> np.ndarray | None:
    """The detector's input: scaled to at most `side` pixels, sides multiples of 32, normalised
    to [-1, 1] (RapidOCR's `DetPreProcess` in "max" mode)."""
    height, width = image.shape[:2]
    ratio = float(side) / max(height, width) if max(height, width) > side else 1.0
    target_h = int(round(int(height * ratio) / 32) * 32)
    target_w = int(round(int(width * ratio) / 32) * 32)
    if target_w <= 0 or target_h <= 0:
        return None
    scaled = resize(image, target_w, target_h)
    normal = (scaled.astype("float32") * (1 / 255.0) - np.array([0.5])) / np.array([0.5])
    planes = np.broadcast_to(normal, (*normal.shape[:2], 3)).transpose((2, 0, 1))
    return np.expand_dims(planes, axis=0).astype(np.float32)


def _boxes(probability: np.ndarray, width: int, height: int) -> list[np.ndarray]:
    """DB post-processing (`DBPostProcess` with its "fast" score and dilation)."""
    text = probability > THRESH
    dilated = text.copy()  # a 2 x 2 dilation: each pixel takes its left, upper and upper-left
    dilated[1:, :] |= text[:-1, :]
    dilated[:, 1:] |= text[:, :-1]
    dilated[1:, 1:] |= text[:-1, :-1]
    rows, cols = dilated.shape
    boxes = []
    for points in patches(dilated)[:MAX_CANDIDATES]:
        box, shortest = mini_box(patch_hull(points))
        if shortest < MIN_SIZE:
            continue
        if score(probability, box) < BOX_THRESH:
            continue
        grown = unclip(box)
        if grown is None:
            continue
        box, shortest = mini_box(path_hull(grown))
        if shortest < MIN_SIZE + 2:
            continue
        box[:, 0] = np.clip(np.round(box[:, 0] / cols * width), 0, width)
        box[:, 1] = np.clip(np.round(box[:, 1] / rows * height), 0, height)
        boxes.append(box.astype(np.int32))
    return boxes


def mini_box(hull: np.ndarray) -> tuple[np.ndarray, float]:
    """The smallest rotated rectangle around `hull` (as `ocr_rectangle` lists hulls), corners
    ordered as RapidOCR's `get_mini_boxes` orders them, and its shorter side (0 for a line)."""
    corners, shortest = min_area_box(hull)
    ordered = sorted(corners.tolist(), key=lambda point: point[0])
    left = (ordered[0], ordered[1]) if ordered[1][1] > ordered[0][1] else (ordered[1], ordered[0])
    right = (ordered[2], ordered[3]) if ordered[3][1] > ordered[2][1] else (ordered[3], ordered[2])
    return np.array([left[0], right[0], right[1], left[1]], dtype=np.float32), shortest


def score(probability: np.ndarray, box: np.ndarray) -> float:
    """The mean probability inside `box` (RapidOCR's `box_score_fast`)."""
    from PIL import Image, ImageDraw

    height, width = probability.shape
    xmin = int(np.clip(np.floor(box[:, 0].min()), 0, width - 1))
    xmax = int(np.clip(np.ceil(box[:, 0].max()), 0, width - 1))
    ymin = int(np.clip(np.floor(box[:, 1].min()), 0, height - 1))
    ymax = int(np.clip(np.ceil(box[:, 1].max()), 0, height - 1))
    mask = Image.new("1", (xmax - xmin + 1, ymax - ymin + 1), 0)
    corners = (box - np.array([xmin, ymin], dtype=np.float32)).astype(np.int32)
    ImageDraw.Draw(mask).polygon([tuple(point) for point in corners.tolist()], fill=1, outline=1)
    inside = np.asarray(mask, dtype=bool)
    region = probability[ymin : ymax + 1, xmin : xmax + 1]
    return float(region[inside].mean()) if inside.any() else 0.0


def unclip(box: np.ndarray) -> np.ndarray | None:
    """`box` grown outwards by its area x `UNCLIP_RATIO` / its perimeter, corners rounded."""
    import pyclipper
    from shapely.geometry import Polygon

    polygon = Polygon(box)
    if polygon.length == 0:
        return None
    distance = polygon.area * UNCLIP_RATIO / polygon.length
    offset = pyclipper.PyclipperOffset()
    offset.AddPath(box, pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
    grown = offset.Execute(distance)
    if len(grown) != 1:
        return None
    return np.array(grown[0], dtype=np.float32).reshape(-1, 2)


def _ordered(box: np.ndarray, width: int, height: int) -> np.ndarray | None:
    """`box`'s corners clockwise from the top left, inside the image; None when it is at most 3
    pixels wide or high (RapidOCR's `filter_tag_det_res`)."""
    by_x = box[np.argsort(box[:, 0]), :]
    left = by_x[:2, :][np.argsort(by_x[:2, 1]), :]
    right = by_x[2:, :][np.argsort(by_x[2:, 1]), :]
    corners = np.array([left[0], right[0], right[1], left[1]], dtype="float32")
    for point in corners:
        point[0] = int(min(max(point[0], 0), width - 1))
        point[1] = int(min(max(point[1], 0), height - 1))
    if int(np.linalg.norm(corners[0] - corners[1])) <= 3:
        return None
    if int(np.linalg.norm(corners[0] - corners[3])) <= 3:
        return None
    return corners


def sorted_boxes(boxes: list[np.ndarray]) -> list[np.ndarray]:
    """Boxes top to bottom, and left to right among those within 10 pixels of the same height."""
    ordered = sorted(boxes, key=lambda box: (box[0][1], box[0][0]))
    for i in range(len(ordered) - 1):
        for j in range(i, -1, -1):
            if abs(ordered[j + 1][0][1] - ordered[j][0][1]) < 10 and (
                ordered[j + 1][0][0] < ordered[j][0][0]
            ):
                ordered[j], ordered[j + 1] = ordered[j + 1], ordered[j]
            else:
                break
    return ordered
