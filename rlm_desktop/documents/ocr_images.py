"""Image operations the PP-OCR pipeline needs, in numpy, computed as OpenCV computes them.

The models were trained, and RapidOCR tuned, on images OpenCV scaled and cropped; the app no
longer ships OpenCV (~170 MB of the bundle for four functions), so these reproduce its arithmetic:
bilinear scaling with pixel centres at half-pixels and 11-bit fixed-point weights, never smoothing
when it shrinks (PIL's BILINEAR does, which blurs small text more than the models expect), and a
perspective crop with OpenCV's bicubic kernel (a = -0.75) at 1/32-pixel positions, edges repeated.
Images are height x width x channels uint8 arrays: one channel for a grey page (the models take
three equal ones, made when the page is normalised) or three in the models' blue-green-red order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from PIL import Image

_COEF_BITS = 11
_COEF_SCALE = 1 << _COEF_BITS
_TAB_BITS = 5  # OpenCV's INTER_BITS: source positions in 1/32 pixel
_TAB_SIZE = 1 << _TAB_BITS
_REMAP_SCALE = 1 << 15
_CUBIC_A = -0.75


def as_array(image: Image.Image) -> np.ndarray:
    """`image` as the models take it: grey stays one channel, colour becomes blue-green-red, and
    transparency is laid on white."""
    if image.mode in ("1", "L"):
        return np.asarray(image.convert("L"), dtype=np.uint8)[:, :, None]
    if image.mode in ("RGBA", "LA", "PA", "P"):
        from PIL import Image as PILImage

        rgba = image.convert("RGBA")
        image = PILImage.new("RGB", rgba.size, "white")
        image.paste(rgba, mask=rgba.getchannel("A"))
    elif image.mode != "RGB":
        image = image.convert("RGB")
    return np.ascontiguousarray(np.asarray(image, dtype=np.uint8)[:, :, ::-1])


def _linear_taps(source: int, target: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each target pixel along one axis: the first source pixel and the two fixed-point
    weights of it and the next, as OpenCV's INTER_LINEAR computes them."""
    scale = source / target
    where = ((np.arange(target, dtype=np.float64) + 0.5) * scale - 0.5).astype(np.float32)
    first = np.floor(where).astype(np.int64)
    fraction = (where - first.astype(np.float32)).astype(np.float32)
    before = first < 0
    fraction[before], first[before] = 0, 0
    after = first >= source - 1
    fraction[after], first[after] = 0, source - 1
    near = np.rint((np.float32(1) - fraction) * _COEF_SCALE).astype(np.int32)
    far = np.rint(fraction * _COEF_SCALE).astype(np.int32)
    return first, near, far


def resize(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """`image` scaled to `width` x `height` pixels as `cv2.resize(..., INTER_LINEAR)` does."""
    rows, cols = image.shape[:2]
    if (cols, rows) == (width, height):
        return image.copy()
    x0, wx0, wx1 = _linear_taps(cols, width)
    y0, wy0, wy1 = _linear_taps(rows, height)
    x1 = np.minimum(x0 + 1, cols - 1)
    y1 = np.minimum(y0 + 1, rows - 1)
    needed = np.unique(np.concatenate([y0, y1]))
    source = image[needed].astype(np.int32)
    across = source[:, x0] * wx0[None, :, None] + source[:, x1] * wx1[None, :, None]
    top = across[np.searchsorted(needed, y0)] >> 4
    bottom = across[np.searchsorted(needed, y1)] >> 4
    # OpenCV's vectorised vertical pass: 16-bit products' high halves, then rounded by 4.
    out = ((top * wy0[:, None, None]) >> 16) + ((bottom * wy1[:, None, None]) >> 16)
    scaled: np.ndarray = np.clip((out + 2) >> 2, 0, 255).astype(np.uint8)
    return scaled


def _cubic(fraction: np.ndarray) -> np.ndarray:
    """OpenCV's four bicubic weights for each fractional position (taps at -1, 0, 1, 2)."""
    a, x = _CUBIC_A, fraction.astype(np.float32)
    w0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    w1 = ((a + 2) * x - (a + 3)) * x * x + 1
    w2 = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1
    w3 = 1 - w0 - w1 - w2
    return np.stack([w0, w1, w2, w3], axis=-1).astype(np.float32)


def _cubic_table() -> np.ndarray:
    """OpenCV's fixed-point 4 x 4 weights for each of the 32 x 32 sub-pixel positions, each set
    summing to exactly 1 (its correction goes to the largest or smallest centre weight)."""
    along = _cubic(np.arange(_TAB_SIZE, dtype=np.float32) / _TAB_SIZE)
    table = along[:, None, :, None] * along[None, :, None, :]  # [fy, fx, ty, tx]
    fixed: np.ndarray = (
        np.rint(table * _REMAP_SCALE).astype(np.int64).reshape(_TAB_SIZE, _TAB_SIZE, 16)
    )
    for fy in range(_TAB_SIZE):
        for fx in range(_TAB_SIZE):
            weights = fixed[fy, fx]
            missing = _REMAP_SCALE - int(weights.sum())
            if missing:
                centre = np.array([5, 6, 9, 10])
                pick = centre[
                    np.argmax(weights[centre]) if missing > 0 else np.argmin(weights[centre])
                ]
                weights[pick] += missing
    return fixed


_CUBIC_TABLE: np.ndarray | None = None


def perspective(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The 3 x 3 matrix that maps the four `source` points onto the four `target` points."""
    rows = []
    for (x, y), (u, v) in zip(source.astype(np.float64), target.astype(np.float64), strict=True):
        rows.append([x, y, 1, 0, 0, 0, -x * u, -y * u])
        rows.append([0, 0, 0, x, y, 1, -x * v, -y * v])
    coefficients = np.linalg.solve(np.array(rows), target.astype(np.float64).reshape(8))
    return np.append(coefficients, 1.0).reshape(3, 3)


def crop(image: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The quadrilateral `corners` (top left, top right, bottom right, bottom left) of `image`
    straightened into a rectangle, as RapidOCR's `get_rotate_crop_image` does with OpenCV
    (`warpPerspective`, INTER_CUBIC, BORDER_REPLICATE), turned upright when it is tall."""
    global _CUBIC_TABLE
    if _CUBIC_TABLE is None:
        _CUBIC_TABLE = _cubic_table()
    points = corners.astype(np.float32)
    width = int(max(np.linalg.norm(points[0] - points[1]), np.linalg.norm(points[2] - points[3])))
    height = int(max(np.linalg.norm(points[0] - points[3]), np.linalg.norm(points[1] - points[2])))
    square = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    back = np.linalg.inv(perspective(points, square))  # target pixel -> source position
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    w = back[2, 0] * xs + back[2, 1] * ys + back[2, 2]
    w = np.where(w != 0, _TAB_SIZE / np.where(w != 0, w, 1), 0)
    fx = np.clip((back[0, 0] * xs + back[0, 1] * ys + back[0, 2]) * w, -(2**31), 2**31 - 1)
    fy = np.clip((back[1, 0] * xs + back[1, 1] * ys + back[1, 2]) * w, -(2**31), 2**31 - 1)
    x, y = np.rint(fx).astype(np.int64), np.rint(fy).astype(np.int64)
    weights = _CUBIC_TABLE[y & (_TAB_SIZE - 1), x & (_TAB_SIZE - 1)]  # height, width, 16
    rows, cols = image.shape[:2]
    total = np.zeros((height, width, image.shape[2]), dtype=np.int64)
    for ty in range(4):
        sy = np.clip((y >> _TAB_BITS) + ty - 1, 0, rows - 1)
        for tx in range(4):
            sx = np.clip((x >> _TAB_BITS) + tx - 1, 0, cols - 1)
            total += image[sy, sx].astype(np.int64) * weights[:, :, ty * 4 + tx, None]
    out: np.ndarray = np.clip((total + (1 << 14)) >> 15, 0, 255).astype(np.uint8)
    if height >= 1.5 * width:
        out = np.rot90(out)
    return out
