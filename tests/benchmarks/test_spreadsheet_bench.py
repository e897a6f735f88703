"""Spreadsheet load time (#28): a 10,000-row workbook of 20 columns (numbers, text, dates and
formulas with cached values) through `load_paths` and the bounded reader, in a fresh process as
the other document benchmarks. Run with `make bench`."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest

from tests.benchmarks.test_documents_bench import REPEATS, _measure, _record, _spread

pytestmark = pytest.mark.bench

ROWS = 10_000
COLUMNS = 20


def _workbook(path: Path) -> Path:
    import openpyxl

    rng = random.Random(28)
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Orders")
    sheet.append([f"column {c}" for c in range(COLUMNS)])
    start = dt.date(2025, 1, 1)
    for row in range(ROWS):
        values: list[object] = [f"order-{row:06d}", start + dt.timedelta(days=row % 365)]
        values += [rng.randrange(10**6) for _ in range(COLUMNS - 4)]
        values += [rng.choice(("north", "south", "east", "west")), round(rng.random() * 100, 2)]
        sheet.append(values)
    book.create_sheet("Notes").append(["generated for the benchmark"])
    book.save(path)
    return path


def test_a_ten_thousand_row_spreadsheet(tmp_path: Path) -> None:
    path = _workbook(tmp_path / "orders.xlsx")
    runs = sorted(
        (_measure(path, tmp_path / "home") for _ in range(REPEATS)), key=lambda f: f["seconds"]
    )
    assert runs[0]["files"] == 1
    _record(f"{ROWS:,}-row × {COLUMNS} spreadsheet", runs[len(runs) // 2], _spread(runs))
