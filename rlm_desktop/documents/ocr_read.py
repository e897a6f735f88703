"""What the text says: PP-OCR's recogniser on each box's crop, as RapidOCR 1.4.4 runs it
(`ch_ppocr_rec`), and its CTC decoding with the spaces between English words kept.

Crops are read six at a time, narrowest first (a batch is as wide as its widest crop, so crops of
like widths waste least), each scaled to 48 pixels high and padded on the right. The recogniser
gives each column of a line its probabilities over the characters; a line's text is each column's
most likely character, repeats and "nothing" (CTC's blank) dropped, and its score the mean
probability of the characters kept.

The models, trained mostly on Chinese, often read the space between two English words as
nothing ("revenuerose") though they still give it a clear probability (on rendered pages in eight
fonts: over 1% at 99% of the dropped spaces, ~20% typically; never over 0.2% between two letters
of one word); `insert_spaces` puts it back where the model itself saw one. (The jumps between
characters' columns vary as much with letter widths as with spaces: they mended fewer words and
split more.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rlm_desktop.documents.ocr_images import resize
from rlm_desktop.documents.ocr_models import Model

BATCH = 6
HEIGHT = 48
WIDTH = 320
"""The recogniser's input: 48 pixels high and, at least, 320 wide (RapidOCR's `rec_img_shape`)."""
SPACE_PROB = 0.01
"""Between two Latin letters or digits a space is read when the recogniser gives a space at least
this probability in a column between them, though its most likely reading there is "nothing"."""


def read(
    model: Model, characters: Sequence[str], crops: Sequence[np.ndarray]
) -> list[tuple[str, float]]:
    """Each crop's text and score (0 to 1), in the order of `crops`."""
    ratios = np.array([crop.shape[1] / float(crop.shape[0]) for crop in crops])
    order = np.argsort(ratios)
    results: list[tuple[str, float]] = [("", 0.0)] * len(crops)
    space = len(characters) - 1
    for begin in range(0, len(crops), BATCH):
        members = order[begin : begin + BATCH]
        widest = max(WIDTH / HEIGHT, *(ratios[index] for index in members))
        batch = np.concatenate([_normalised(crops[index], widest)[None] for index in members])
        predictions = model.run(batch.astype(np.float32))
        for index, row in zip(members, predictions, strict=True):
            results[index] = decode(row, characters, space)
    return results


def _normalised(crop: np.ndarray, widest: float) -> np.ndarray:
    """`crop` 48 pixels high, scaled to [-1, 1], padded with zeros to the batch's width."""
    width = int(HEIGHT * widest)
    height, crop_width = crop.shape[:2]
    scaled_width = min(width, int(math.ceil(HEIGHT * (crop_width / float(height)))))
    scaled = resize(crop, scaled_width, HEIGHT).astype("float32")
    planes = np.broadcast_to(scaled, (HEIGHT, scaled_width, 3)).transpose((2, 0, 1)) / 255
    planes -= 0.5
    planes /= 0.5
    padded = np.zeros((3, HEIGHT, width), dtype=np.float32)
    padded[:, :, 0:scaled_width] = planes
    return padded


def decode(row: np.ndarray, characters: Sequence[str], space: int) -> tuple[str, float]:
    """One line's text and score from its columns' probabilities (CTC, spaces kept)."""
    best = row.argmax(axis=1)
    kept = best != 0
    kept[1:] &= best[1:] != best[:-1]
    columns = np.flatnonzero(kept)
    probabilities = row.max(axis=1)[kept].tolist() or [0]
    text = "".join(characters[index] for index in best[kept])
    score = float(np.mean(probabilities))
    if len(columns) == len(text):
        text = insert_spaces(text, columns.tolist(), row[:, space].tolist())
    return text, score


def insert_spaces(
    text: str, columns: Sequence[int], space: Sequence[float], threshold: float = SPACE_PROB
) -> str:
    """`text` with a space between two Latin letters or digits wherever the recogniser gave a
    space more than `threshold` probability in a column between them.

    `columns[i]` is the column where `text[i]` was read, `space[c]` the probability of a space in
    column `c`. A space already read is never doubled, and other scripts (Chinese, which has no
    spaces between words) and punctuation are left as they are.
    """
    out = text[:1]
    for index in range(1, len(text)):
        before, char = text[index - 1], text[index]
        if _latin(before) and _latin(char):
            between = space[columns[index - 1] + 1 : columns[index]]
            if len(between) and max(between) > threshold:
                out += " "
        out += char
    return out


def _latin(char: str) -> bool:
    return char.isascii() and char.isalnum()
