"""Slide deck benchmark: a 100-slide .pptx through `load_paths`, bounded reader included.

Each slide has a title, three text boxes, a 5 x 4 table and speaker notes (python-pptx writes the
deck). Each load runs in a fresh process (the documents benchmark's script): min, median and max
of 3 are reported. Run with `make bench`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks.report import record_figure
from tests.benchmarks.test_documents_bench import REPEATS, _measure, _spread
from tests.documents.office_makers import SlideSpec, make_pptx

pytestmark = pytest.mark.bench

SLIDES = 100


def _deck(path: Path) -> Path:
    slides = [
        SlideSpec(
            f"Slide title {number}",
            boxes=[f"Point {box} of slide {number}: revenue, margin and risk" for box in range(3)],
            table=[[f"r{row}c{column} {number}" for column in range(4)] for row in range(5)],
            notes=f"Speaker notes for slide {number}: mention the forecast.",
        )
        for number in range(1, SLIDES + 1)
    ]
    return make_pptx(path, slides)


def test_100_slide_deck(tmp_path: Path, isolated_home: Path) -> None:
    deck = _deck(tmp_path / "deck.pptx")
    runs = sorted(
        (_measure(deck, isolated_home) for _ in range(REPEATS)), key=lambda r: r["seconds"]
    )
    middle = runs[len(runs) // 2]["seconds"]
    record_figure(
        "documents",
        f"{SLIDES}-slide deck (.pptx)",
        f"{middle:.2f} s",
        f"{_spread(runs)}; {deck.stat().st_size / 1e6:.1f} MB file, {runs[0]['chars']:,} chars, "
        f"{runs[0]['tokens']:,} tokens",
    )
    assert all(run["files"] == 1 for run in runs)
