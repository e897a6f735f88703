"""Text recognition (OCR) on the CPU: PP-OCR's models through onnxruntime (`ocr_pipeline`).

The models ship inside the `rapidocr-onnxruntime` wheel, so nothing is downloaded and no network
is touched; the pipeline that runs them is our own (numpy, PIL, shapely, pyclipper), step for step
RapidOCR's, so the app needs no OpenCV. It is built on first use (numpy and onnxruntime take a
second and ~500 MB of address space) and kept for the life of the process: the bounded reader
worker builds it once per load.

The reader runs under an address-space bound (RLIMIT_AS, 1 GiB by default), which counts memory
reserved and never touched. So before the first import the engine spends less of it (and turns
off onnxruntime's own telemetry, see `_before_import`): OpenBLAS (numpy's, unused here) starts no
threads of its own, glibc keeps two malloc arenas instead of one per thread (each reserves 64 MB)
and maps the models' large buffers rather than keeping them in its heap, onnxruntime uses one
thread per core up to `MAX_THREADS` in each model, and images are given to the models with their
longest side at most `MAX_SIDE` pixels, text found on a copy at most `DETECT_SIDE` (the
detector's memory grows with the pixels it sees: ~650 MB at 2000 pixels, ~300 MB at 1280) and
read on crops of the larger image. An allocation that fails inside onnxruntime or numpy is raised
as `MemoryError`, which the reader reports as a file too large for its memory bound.

The recogniser's models, trained mostly on Chinese, often read the space between two English words
as nothing ("revenuerose"); `ocr_read.insert_spaces` puts it back where the model saw a space.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rlm_desktop.documents.progress import working

if TYPE_CHECKING:
    from PIL import Image

    from rlm_desktop.documents.ocr_pipeline import Pipeline

MAX_SIDE = 2000
"""Longest side, in pixels, of an image given to the models (RapidOCR's own default). Text 10
points high on a page of this size is about 20 pixels high; larger images are scaled down."""
DETECT_SIDE = 1280
"""Longest side of the copy the text detector looks at (PaddleOCR's default is 960): 10-point
text stays ~13 pixels high, which it finds, while its memory stays within the reader's bound."""
READ_WELL = 0.8
"""A page read with at least this confidence is taken as it is, without trying it turned over."""
TURNED_CHARS = 12
"""What a page read turned over must give (and twice what it gave upright) to be taken so."""
MAX_THREADS = 4
"""Threads onnxruntime may use within one model run (one per core, up to this)."""
MIN_SCORE = 0.5
"""Lines recognised with a lower score are dropped (RapidOCR's default)."""
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8  # glibc's mallopt parameters
_MIB = 1024 * 1024
_lock = threading.Lock()
_engine: Pipeline | None = None


@dataclass(frozen=True, slots=True)
class Recognised:
    """What OCR read in one image: its text, line by line, and a confidence from 0 to 1 (the mean
    of the lines' scores, weighted by their characters; None when no text was found)."""

    text: str
    confidence: float | None
    chars: int


@dataclass(frozen=True, slots=True)
class _Box:
    top: float
    bottom: float
    left: float
    text: str
    score: float

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2


def threads() -> int:
    """How many threads a model run may use: the cores this process may run on, capped."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


def _before_import() -> None:
    """Settings that must come before numpy and onnxruntime are first imported.

    onnxruntime 1.29+ on Linux and macOS has telemetry of its own (Microsoft's 1DS: a device id
    and an event queue under ~/.cache/Microsoft, uploaded to events.data.microsoft.com) unless
    ORT_DISABLE_TELEMETRY is set before it initialises; documents are read with no network.
    """
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with contextlib.suppress(OSError, AttributeError, TypeError):  # not glibc: nothing to tune
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_ARENA_MAX, 2)
        # The models' buffers are large and short-lived: mapped and unmapped, not kept in the
        # heap (the reader keeps up to 64 MB; over a few files the heap had grown by 300 MB).
        libc.mallopt(_M_MMAP_THRESHOLD, 16 * _MIB)
        libc.mallopt(_M_TRIM_THRESHOLD, 32 * _MIB)


def _give_back_memory() -> None:
    """Return the heap's free pages after a run, so the next file starts from the same size."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).malloc_trim(0)


def engine() -> Pipeline:
    """The process's OCR pipeline, its models loaded on first use."""
    global _engine
    with _lock:
        if _engine is None:
            _before_import()
            import onnxruntime

            from rlm_desktop.documents import ocr_models
            from rlm_desktop.documents.ocr_pipeline import Pipeline

            onnxruntime.disable_telemetry_events()
            _engine = Pipeline(ocr_models.load(threads()), MAX_SIDE, DETECT_SIDE, MIN_SCORE)
        return _engine


def recognise(image: Image.Image) -> Recognised:
    """The text in `image` (mode "L" or "RGB"), lines top to bottom, words left to right.

    A page read as nothing, or barely, is read once more turned over: it may have been scanned
    upside down. (RapidOCR's line-by-line orientation classifier is off: on typed pages it
    turned correct lines over with high confidence, 2.7% of the words lost on our test pages.)
    """
    upright = _read(image)
    if upright.confidence is not None and upright.confidence >= READ_WELL:
        return upright
    turned = _read(image.rotate(180))
    if (turned.confidence or 0.0) < READ_WELL or turned.chars < max(
        TURNED_CHARS, 2 * upright.chars
    ):
        return upright  # a logo or a photo turned over reads as a stray letter or two
    return turned


def _read(image: Image.Image) -> Recognised:
    try:
        result = engine().read(image)
    except Exception as error:
        if _out_of_memory(error):
            raise MemoryError(f"OCR ran out of memory ({str(error)[-80:]})") from error
        raise
    finally:
        _give_back_memory()
        working()  # one page more: the reader's time bound counts from here
    boxes = [_box(line.points, line.text, line.score) for line in result if line.text.strip()]
    lines = group_lines(boxes)
    text = "\n".join(" ".join(box.text.strip() for box in line) for line in lines)
    chars = sum(len(box.text.strip()) for box in boxes)
    if not chars:
        return Recognised("", None, 0)
    confidence = sum(box.score * len(box.text.strip()) for box in boxes) / chars
    return Recognised(text, min(1.0, max(0.0, confidence)), chars)


def _out_of_memory(error: BaseException) -> bool:
    """True for onnxruntime's and numpy's words for an allocation that failed."""
    text = str(error)
    return isinstance(error, MemoryError) or "bad_alloc" in text or "Insufficient memory" in text


def _box(points: list[list[float]], text: str, score: float) -> _Box:
    ys = [point[1] for point in points]
    xs = [point[0] for point in points]
    return _Box(min(ys), max(ys), min(xs), text, float(score))


def group_lines(boxes: list[_Box]) -> list[list[_Box]]:
    """Boxes grouped into lines, top to bottom, each line's boxes left to right.

    A box joins a line when it overlaps the line's height by at least half of the lower of the
    two, so words of one line that sit slightly higher or lower (a skewed scan) stay together.
    """
    lines: list[list[_Box]] = []
    spans: list[tuple[float, float]] = []
    for box in sorted(boxes, key=lambda box: box.middle):
        if spans:
            top, bottom = spans[-1]
            overlap = min(bottom, box.bottom) - max(top, box.top)
            if overlap >= 0.5 * min(bottom - top, box.bottom - box.top):
                lines[-1].append(box)
                spans[-1] = (min(top, box.top), max(bottom, box.bottom))
                continue
        lines.append([box])
        spans.append((box.top, box.bottom))
    return [sorted(line, key=lambda box: box.left) for line in lines]
