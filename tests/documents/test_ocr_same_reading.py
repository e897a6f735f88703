"""Our PP-OCR pipeline (numpy, PIL, shapely, pyclipper; no OpenCV) reads the same pages as
RapidOCR 1.4.4 itself, set up as the app used it (no line classifier, images at most 2000
pixels, the detector's copy at most 1280, spaces kept by `insert_spaces`): the same lines, word
for word, in the same order, from the same boxes (to the pixel: the rectangles around text patches
are computed as OpenCV computes them, float32 rounding and all, see `ocr_rectangle`); the scores
differ by a little, as OpenCV's fixed-point scaling and bicubic crops differ from ours by one grey
level here and there.

RapidOCR needs OpenCV, which the development environment has (the Makefile's headless build) and
the app no longer does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from rlm_desktop.documents.ocr_engine import DETECT_SIDE, MAX_SIDE, MIN_SCORE, engine, threads
from rlm_desktop.documents.ocr_read import insert_spaces
from tests.documents.ocr_makers import FONT, page_image, photo_page, skewed_scan, text_lines

Reading = list[tuple[list[list[float]], str, float]]


def _rapidocr() -> Callable[[Image.Image], Reading]:
    """RapidOCR 1.4.4 as the app built it before it had a pipeline of its own."""
    from rapidocr_onnxruntime import RapidOCR
    from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

    built = RapidOCR(
        use_cls=False,
        max_side_len=MAX_SIDE,
        text_score=MIN_SCORE,
        intra_op_num_threads=threads(),
        inter_op_num_threads=1,
    )
    detector = built.text_det
    mean, std = detector.mean, detector.std
    detector.get_preprocess = lambda _longest: DetPreProcess(DETECT_SIDE, "max", mean, std)
    decoder = built.text_rec.postprocess_op
    space = decoder.dict[" "]

    def spaced(preds: Any, return_word_box: bool = False, **kwargs: Any) -> Any:
        results = decoder(preds, return_word_box, **kwargs)
        best = preds.argmax(axis=2)
        out = []
        for line, (row, (text, score)) in enumerate(zip(best, results, strict=True)):
            kept = row != 0
            kept[1:] &= row[1:] != row[:-1]
            columns = kept.nonzero()[0].tolist()
            if len(columns) == len(text):
                text = insert_spaces(text, columns, preds[line, :, space].tolist())
            out.append((text, score))
        return out

    built.text_rec.postprocess_op = spaced

    def read(image: Image.Image) -> Reading:
        result, _ = built(image)
        return [(points, text, float(score)) for points, text, score in result or ()]

    return read


def _strip(lines: list[str], size: tuple[int, int], font_px: int) -> Image.Image:
    image = Image.new("L", size, 255)
    ImageDraw.Draw(image).text((8, 2), lines[0], fill=0, font=ImageFont.truetype(FONT, font_px))
    return image


PAGES: dict[str, Callable[[], Image.Image]] = {
    "page": lambda: page_image(text_lines(8, seed=11)),
    "a4-30-lines": lambda: page_image(text_lines(30, seed=5), (1654, 2339), font_px=34),
    "small-font": lambda: page_image(text_lines(24, words=10, seed=7), (1654, 1169), font_px=20),
    "skewed": lambda: skewed_scan(text_lines(9, seed=3), 4.0),
    "skewed-other-way": lambda: skewed_scan(text_lines(9, seed=4), -2.5),
    "photo": lambda: photo_page(text_lines(9, seed=8)),
    "upside-down": lambda: page_image(text_lines(8, seed=9)).rotate(180),
    "one-line-strip": lambda: _strip(["Invoice 4471 for the northern region"], (1500, 60), 34),
    "low-strip": lambda: _strip(["total due"], (300, 26), 20),
    "over-2000": lambda: page_image(text_lines(20, seed=2), (2480, 1754), font_px=44),
}


@pytest.fixture(scope="module")
def rapidocr() -> Callable[[Image.Image], Reading]:
    return _rapidocr()


@pytest.mark.parametrize("name", list(PAGES))
def test_our_pipeline_reads_a_page_as_rapidocr_did(
    name: str, rapidocr: Callable[[Image.Image], Reading]
) -> None:
    image = PAGES[name]()

    theirs = rapidocr(image)
    ours = [(line.points, line.text, line.score) for line in engine().read(image)]

    assert [text for _, text, _ in ours] == [text for _, text, _ in theirs]
    assert theirs or name == "upside-down"
    gap = max(
        (
            float(np.abs(np.array(mine) - np.array(their)).max())
            for (mine, _, _), (their, _, _) in zip(ours, theirs, strict=True)
        ),
        default=0.0,
    )
    scores = max(
        (abs(a - b) for (_, _, a), (_, _, b) in zip(ours, theirs, strict=True)), default=0.0
    )
    print(f"{name}: {len(ours)} lines, boxes at most {gap:g} px apart, scores {scores:.2g}")
    assert gap <= 1
    assert scores < 0.02
