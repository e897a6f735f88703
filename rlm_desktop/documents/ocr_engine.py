"""Text recognition (OCR) on the CPU: RapidOCR's PP-OCR models through onnxruntime.

The models ship inside the `rapidocr-onnxruntime` wheel, so nothing is downloaded and no network
is touched. The engine is imported on first use (numpy, OpenCV and onnxruntime take a second and
~500 MB of address space) and kept for the life of the process: the bounded reader worker builds
it once per load.

The reader runs under an address-space bound (RLIMIT_AS, 1 GiB by default), which counts memory
reserved and never touched. So before the first import the engine spends less of it (and turns
off onnxruntime's own telemetry, see `_before_import`): OpenBLAS
(numpy's and OpenCV's, unused here) starts no threads of its own, glibc keeps two malloc arenas
instead of one per thread (each reserves 64 MB) and maps the models' large buffers rather than
keeping them in its heap, onnxruntime uses one thread per core up to
`MAX_THREADS` in each model and OpenCV one, and images are given to the models with their longest
side at most `MAX_SIDE` pixels, text found on a copy at most `DETECT_SIDE` (the detector's
memory grows with the pixels it sees: ~650 MB at 2000 pixels, ~300 MB at 1280) and read on crops of
the larger image. An allocation that fails inside onnxruntime or OpenCV is raised as `MemoryError`,
which the reader reports as a file too large for its memory bound.

The recogniser's models, trained mostly on Chinese, often read the space between two English words
as nothing ("revenuerose"); `_read_spaces` puts it back where the model itself saw a space.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rlm_desktop.documents.progress import working

if TYPE_CHECKING:
    from PIL import Image

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
SPACE_PROB = 0.01
"""Between two Latin letters or digits a space is read when the recogniser gives a space at least
this probability in a column between them, though its most likely reading there is "nothing"."""

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8  # glibc's mallopt parameters
_MIB = 1024 * 1024
_lock = threading.Lock()
_engine: Any = None


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
    """Settings that must come before numpy, OpenCV and onnxruntime are first imported.

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


def engine() -> Any:
    """The process's OCR engine, built on first use."""
    global _engine
    with _lock:
        if _engine is None:
            _before_import()
            import cv2
            import onnxruntime
            from rapidocr_onnxruntime import RapidOCR

            onnxruntime.disable_telemetry_events()
            cv2.setNumThreads(1)
            count = threads()
            built = RapidOCR(
                use_cls=False,
                max_side_len=MAX_SIDE,
                text_score=MIN_SCORE,
                intra_op_num_threads=count,
                inter_op_num_threads=1,
            )
            _detect_smaller(built)
            _read_spaces(built)
            _engine = built
        return _engine


def _detect_smaller(built: Any) -> None:
    """Have the detector look at a copy at most `DETECT_SIDE` pixels long.

    RapidOCR 1.4.4 only lets its detector grow an image (or cap it at 2000 pixels), so its
    per-image choice of preprocessing is replaced on this engine; boxes are still mapped back to
    the full image, whose crops the recogniser reads.
    """
    try:
        from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

        detector = built.text_det
        mean, std = detector.mean, detector.std
    except (ImportError, AttributeError):  # another RapidOCR: keep its own sizes
        return
    detector.get_preprocess = lambda _longest: DetPreProcess(DETECT_SIDE, "max", mean, std)


def _read_spaces(built: Any) -> None:
    """Have the recogniser keep the spaces between English words that its best reading drops.

    PP-OCR's recogniser reads a line column by column (CTC): each column's most likely character,
    or "nothing". Across the gap between two words it often prefers "nothing" to the space, yet
    still gives the space a clear probability (on rendered pages in eight fonts: over 1% at 99% of
    the dropped spaces, ~20% typically; never over 0.2% between two letters of one word). Its
    decoder is wrapped on this engine so that such a space is inserted (see `insert_spaces`); it
    reads only the probabilities the model already returned, so costs no memory and ~1 ms a page.
    (The jumps between characters' columns, which RapidOCR's `return_word_box` exposes, vary as
    much with letter widths as with spaces: they mended fewer words and split more.)
    """
    try:
        recogniser = built.text_rec
        decoder = recogniser.postprocess_op
        space = decoder.dict[" "]
    except (AttributeError, KeyError, TypeError):  # another RapidOCR: keep its decoding
        return
    recogniser.postprocess_op = _SpacedDecoder(decoder, space)


class _SpacedDecoder:
    """RapidOCR's CTC decoder, with `insert_spaces` applied to each line it reads."""

    def __init__(self, decoder: Any, space: int) -> None:
        self.decoder = decoder
        self.space = space

    def __getattr__(self, name: str) -> Any:
        return getattr(self.decoder, name)

    def __call__(self, preds: Any, return_word_box: bool = False, **kwargs: Any) -> Any:
        results = self.decoder(preds, return_word_box, **kwargs)
        if return_word_box:  # positions are given per character: leave them as they are
            return results
        best = preds.argmax(axis=2)
        spaced = []
        for line, (row, (text, score)) in enumerate(zip(best, results, strict=True)):
            kept = row != 0  # CTC: a column reads a character unless blank or a repeat
            kept[1:] &= row[1:] != row[:-1]
            columns = kept.nonzero()[0].tolist()
            if len(columns) == len(text):
                text = insert_spaces(text, columns, preds[line, :, self.space].tolist())
            spaced.append((text, score))
        return spaced


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
        result, _ = engine()(image)
    except Exception as error:
        if _out_of_memory(error):
            raise MemoryError(f"OCR ran out of memory ({str(error)[-80:]})") from error
        raise
    finally:
        _give_back_memory()
        working()  # one page more: the reader's time bound counts from here
    boxes = [_box(points, text, score) for points, text, score in result or () if text.strip()]
    lines = group_lines(boxes)
    text = "\n".join(" ".join(box.text.strip() for box in line) for line in lines)
    chars = sum(len(box.text.strip()) for box in boxes)
    if not chars:
        return Recognised("", None, 0)
    confidence = sum(box.score * len(box.text.strip()) for box in boxes) / chars
    return Recognised(text, min(1.0, max(0.0, confidence)), chars)


def _out_of_memory(error: BaseException) -> bool:
    """True for onnxruntime's and OpenCV's words for an allocation that failed."""
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
