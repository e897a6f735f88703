"""The one way the app writes a CSV file, read back as a spreadsheet's import reads it: a
number the app computed stays a number, a negative one too; text that would start a formula,
even text that reads like a number, is prefixed with a single quote; no character raw that the
exports mark."""

from __future__ import annotations

from pathlib import Path

from rlm_desktop.exports.csv_files import write_csv
from tests.formula_cells import FORMULAS, formula_cells, read_csv


def test_numbers_stay_numbers_and_text_that_starts_a_formula_is_text(tmp_path: Path) -> None:
    path = tmp_path / "cells.csv"
    rows = [[-0.5, -3, True, None, "-0.5", formula] for formula in FORMULAS]
    write_csv(path, ["delta", "count", "ok", "none", "answer", "=header"], rows)

    table = read_csv(path)
    assert list(table[0]) == ["delta", "count", "ok", "none", "answer", "'=header"]
    for row, formula in zip(table, FORMULAS, strict=True):
        assert (row["delta"], row["count"], row["ok"], row["none"]) == ("-0.5", "-3", "True", "")
        assert (row["answer"], row["'=header"]) == ("'-0.5", f"'{formula}")
    assert formula_cells(table) == []


def test_text_is_written_as_the_exports_write_it(tmp_path: Path) -> None:
    path = tmp_path / "cells.csv"
    write_csv(path, ["answer"], [["caf\udce9 \x00\x1b[31m \u202e"], ["\x00=1+1"]])

    assert [row["answer"] for row in read_csv(path)] == [
        "caf\\udce9 \\x00\\x1b[31m \\u202e",
        "\\x00=1+1",  # marked, a NUL first starts no formula
    ]
