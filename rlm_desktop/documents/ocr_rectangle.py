"""The smallest rotated rectangle around a text patch, computed as OpenCV's `minAreaRect` and
`boxPoints` compute it, to the last float32 bit.

The exact bits matter: RapidOCR widens each rectangle with pyclipper, which truncates its corners
to whole pixels, and OpenCV's corners often land a hair under a whole pixel (399.99994 for 400:
the caliper's unit vector is an edge times its float32 inverse length). A rectangle computed
exactly would be a pixel wider than RapidOCR's, its crop a pixel different, its score a little
off. So the convex hull is listed as OpenCV lists it (`convexHull`, counter-clockwise on screen
coordinates' own sense, starting where its cyclic shift of the input's indices puts it) and the
rotating calipers run in float32 step for step (`rotcalipers.cpp`). Against OpenCV 5.1 on random
text-like patches the corners are the same to the bit for 92% of straight patches and half of
skewed ones; the rest differ in the last bits, or (6% of skewed ones) by up to 0.1 pixel where
two candidate rectangles' areas tie in float32 and OpenCV 5 breaks the tie otherwise. On the test
pages every box is RapidOCR's to the pixel (tests/documents/test_ocr_same_reading.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_F = np.float32
_HALF = _F(0.5)


def _hull(points: np.ndarray) -> np.ndarray:
    """The convex hull's corners (no collinear ones), positive shoelace area as OpenCV's
    `convexHull(clockwise=False)` gives them; fewer than three for a line or a point."""
    import shapely

    hull = shapely.convex_hull(shapely.multipoints(points.astype(np.float64)))
    if not isinstance(hull, shapely.Polygon):
        return np.zeros((0, 2), dtype=np.float64)
    corners = np.asarray(hull.exterior.coords, dtype=np.float64)[:-1]
    x, y = corners[:, 0], corners[:, 1]
    if np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)) < 0:
        corners = corners[::-1]
    return corners


def patch_hull(points: np.ndarray) -> np.ndarray:
    """The hull of a patch as OpenCV lists the hull of its traced outline: the outline starts at
    the patch's top-left pixel and runs against the hull's order, so the hull ends there."""
    corners = _hull(points)
    if len(corners) < 3:
        return corners
    top_left = np.lexsort((corners[:, 0], corners[:, 1]))[0]
    return np.roll(corners, len(corners) - 1 - top_left, axis=0)


def path_hull(path: np.ndarray) -> np.ndarray:
    """The hull of the polygon `path` (its points in order) as OpenCV lists it: from the corner
    that comes first in `path` when the corners follow `path`'s order, else from the last."""
    corners = _hull(path)
    if len(corners) < 3:
        return corners
    where = {tuple(point): index for index, point in reversed(list(enumerate(path.tolist())))}
    indices = np.array([where.get(tuple(point), -1) for point in corners.tolist()])
    steps = np.diff(np.append(indices, indices[0]))
    if (steps < 0).sum() <= 1:  # ascending but for the one wrap
        start = int(np.argmin(indices))
    elif (steps > 0).sum() <= 1:
        start = int(np.argmax(indices))
    else:
        return corners
    return np.roll(corners, -start, axis=0)


def _calipers(hull: np.ndarray) -> tuple[tuple[_F, _F], tuple[_F, _F], tuple[_F, _F]]:
    """OpenCV's `rotatingCalipers(CALIPERS_MINAREARECT)`: a corner of the smallest rectangle and
    its two sides as vectors, in float32."""
    n = len(hull)
    xs = [_F(value) for value in hull[:, 0]]
    ys = [_F(value) for value in hull[:, 1]]
    vx, vy, inverse = [_F(0)] * n, [_F(0)] * n, [_F(0)] * n
    left = bottom = right = top = 0
    for i in range(n):
        if xs[i] < xs[left]:
            left = i
        if xs[i] > xs[right]:
            right = i
        if ys[i] > ys[top]:
            top = i
        if ys[i] < ys[bottom]:
            bottom = i
        following = (i + 1) % n
        dx = float(xs[following]) - float(xs[i])
        dy = float(ys[following]) - float(ys[i])
        vx[i], vy[i] = _F(dx), _F(dy)
        inverse[i] = _F(1.0 / np.sqrt(dx * dx + dy * dy))
    orientation = _F(0)
    ax, ay = float(vx[n - 1]), float(vy[n - 1])
    for i in range(n):
        turn = ax * float(vy[i]) - ay * float(vx[i])
        if turn != 0:
            orientation = _F(1) if turn > 0 else _F(-1)
            break
        ax, ay = float(vx[i]), float(vy[i])
    base_a, base_b = orientation, _F(0)
    seq = [bottom, right, top, left]
    smallest = _F(np.finfo(np.float32).max)
    best = (0, base_a, _F(0), base_b, _F(0), 0)
    for _ in range(n):
        dots = (
            base_a * vx[seq[0]] + base_b * vy[seq[0]],
            -base_b * vx[seq[1]] + base_a * vy[seq[1]],
            -base_a * vx[seq[2]] - base_b * vy[seq[2]],
            base_b * vx[seq[3]] - base_a * vy[seq[3]],
        )
        main, widest = 0, dots[0] * inverse[seq[0]]
        for i in range(1, 4):
            cosine = dots[i] * inverse[seq[i]]
            if cosine > widest:
                main, widest = i, cosine
        lead = seq[main]
        lead_x, lead_y = vx[lead] * inverse[lead], vy[lead] * inverse[lead]
        base_a, base_b = (
            (lead_x, lead_y),
            (lead_y, -lead_x),
            (-lead_x, -lead_y),
            (-lead_y, lead_x),
        )[main]
        seq[main] = (seq[main] + 1) % n
        width = (xs[seq[1]] - xs[seq[3]]) * base_a + (ys[seq[1]] - ys[seq[3]]) * base_b
        height = -(xs[seq[2]] - xs[seq[0]]) * base_b + (ys[seq[2]] - ys[seq[0]]) * base_a
        area = width * height
        if area <= smallest:
            smallest = area
            best = (seq[3], base_a, width, base_b, height, seq[0])
    first, a1, width, b1, height, second = best
    a2, b2 = -b1, a1
    c1 = a1 * xs[first] + ys[first] * b1
    c2 = a2 * xs[second] + ys[second] * b2
    scale = _F(1) / (a1 * b2 - a2 * b1)
    corner = ((c1 * b2 - c2 * b1) * scale, (a1 * c2 - a2 * c1) * scale)
    return corner, (a1 * width, b1 * width), (a2 * height, b2 * height)


def min_area_box(hull: np.ndarray) -> tuple[np.ndarray, float]:
    """The four corners of the smallest rectangle around `hull` (listed as OpenCV lists them) in
    `boxPoints`' order, float32, and its shorter side (0 for a line or a point)."""
    if len(hull) < 3:
        return np.zeros((4, 2), dtype=np.float32), 0.0
    corner, side, other = _calipers(hull)
    cx = corner[0] + (side[0] + other[0]) * _HALF
    cy = corner[1] + (side[1] + other[1]) * _HALF
    lengths = [_F(np.sqrt(float(v[0]) ** 2 + float(v[1]) ** 2)) for v in (side, other)]
    width, height, angle = lengths[0], lengths[1], _F(0)
    sides: Sequence[tuple[tuple[_F, _F], int]] = (
        (side, 0),
        (other, 1),
        ((-side[0], -side[1]), 0),
        ((-other[0], -other[1]), 1),
    )
    for (x, y), which in sides:  # OpenCV reports the side whose angle is in [-90, 0) degrees
        degrees = _F(np.arctan2(float(y), float(x)) * 180 / np.pi)
        if -90 <= degrees < 0:
            width, height, angle = lengths[which], lengths[1 - which], degrees
            break
    radians = float(angle) * np.pi / 180.0
    b = _F(np.cos(radians)) * _HALF
    a = _F(np.sin(radians)) * _HALF
    p0 = (cx - a * height - b * width, cy + b * height - a * width)
    p1 = (cx + a * height - b * width, cy - b * height - a * width)
    p2 = (_F(2) * cx - p0[0], _F(2) * cy - p0[1])
    p3 = (_F(2) * cx - p1[0], _F(2) * cy - p1[1])
    return np.array([p0, p1, p2, p3], dtype=np.float32), float(min(width, height))
