"""The separate patches of a bitmap (8-connected, as OpenCV's `findContours` sees them), each as
the points its convex hull is made of, found in numpy.

Each row's patches are runs of set pixels; runs in neighbouring rows that touch (diagonally too)
belong together, and the groups are found by repeatedly giving each run the lowest label of any
run it touches. A patch's hull is the hull of its runs' end pixels, the same hull as that of the
outline OpenCV traces around it, so its smallest rotated rectangle is the same too. Patches come
in the order `findContours` gives their outlines (the patch met last in reading order first),
which decides the candidates kept when there are more than the detector looks at. The outlines
of holes inside a patch, which `RETR_LIST` lists too, are left out: a hole's rectangle lies within
its patch's, so it could only read the patch's words again (none on the test pages had one).
"""

from __future__ import annotations

import numpy as np


def runs(bitmap: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every run of set pixels, row by row and left to right: its row, first and last column."""
    padded = np.zeros((bitmap.shape[0], bitmap.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = bitmap
    change = np.diff(padded, axis=1)
    rows, starts = np.nonzero(change == 1)
    _, ends = np.nonzero(change == -1)
    return rows, starts, ends - 1


def _touching(
    rows: np.ndarray, starts: np.ndarray, ends: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of runs in neighbouring rows that touch, side by side or at a corner."""
    # Runs sorted by row then column are sorted by this key too; runs of a row are ordered and
    # apart, so the runs of the row above touching [start - 1, end + 1] are consecutive.
    stride = width + 4
    start_keys = rows * stride + starts
    end_keys = rows * stride + ends
    above_row = (rows - 1) * stride
    low = np.searchsorted(end_keys, above_row + starts - 1, "left")
    high = np.searchsorted(start_keys, above_row + ends + 1, "right")
    counts = np.maximum(high - low, 0)
    below = np.repeat(np.arange(len(rows)), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    above = np.repeat(low, counts) + offsets
    return above, below


def patches(bitmap: np.ndarray) -> list[np.ndarray]:
    """Each patch of set pixels as the (x, y) points of its runs' ends, float32, in the order
    OpenCV's `findContours` lists their outlines."""
    rows, starts, ends = runs(bitmap)
    if not len(rows):
        return []
    above, below = _touching(rows, starts, ends, bitmap.shape[1])
    labels = np.arange(len(rows))
    while True:
        lowest = np.minimum(labels[above], labels[below])
        before = labels.copy()
        np.minimum.at(labels, above, lowest)
        np.minimum.at(labels, below, lowest)
        labels = labels[labels]
        if np.array_equal(labels, before):
            break
    order = np.argsort(labels, kind="stable")
    groups = np.split(order, np.flatnonzero(np.diff(labels[order])) + 1)
    found = []
    for group in groups[::-1]:  # a patch's label is its first run: raster order, reversed
        ys = np.repeat(rows[group], 2)
        xs = np.stack([starts[group], ends[group]], axis=1).reshape(-1)
        found.append(np.stack([xs, ys], axis=1).astype(np.float32))
    return found
