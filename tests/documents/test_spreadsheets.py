"""Spreadsheets load as their sheets' rows (#28, first step): every sheet under a header that
names it and its used range, hidden ones too, numbers and dates as a reader writes them, through
the bounded reader process; a damaged one is one line and costs no other file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import openpyxl

from rlm_desktop.documents import load_paths
from rlm_desktop.documents.spreadsheet import column_name


def _workbook(path: Path) -> Path:
    book = openpyxl.Workbook()
    summary = book.active
    assert summary is not None
    summary.title = "Summary"
    summary["B2"], summary["C2"] = "Region", "Total"
    summary["B3"], summary["C3"] = "north", 12
    summary["D5"] = dt.date(2025, 3, 14)
    second = book.create_sheet("Q3 detail")
    second["A1"], second["B1"] = "the vault code", 4242.5
    hidden = book.create_sheet("Archive")
    hidden["A1"] = "only in a hidden sheet"
    hidden.sheet_state = "hidden"
    book.save(path)
    return path


def test_every_sheet_reaches_the_text_with_its_range(tmp_path: Path) -> None:
    path = _workbook(tmp_path / "figures.xlsx")
    result = load_paths([path])
    assert result.errors == []
    [document] = result.documents
    assert document.type == "spreadsheet"
    assert document.text.split("\n") == [
        "## Sheet: Summary (B2:D5)",
        "Region\tTotal",
        "north\t12",
        "",
        "\t\t2025-03-14",
        "",
        "## Sheet: Q3 detail (A1:B1)",
        "the vault code\t4242.5",
        "",
        "## Sheet: Archive (A1:A1, hidden)",
        "only in a hidden sheet",
    ]


def test_a_damaged_spreadsheet_is_one_line_and_the_others_load(tmp_path: Path) -> None:
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04" + b"\x00garbage" * 100)
    renamed = tmp_path / "notes.xlsx"
    renamed.write_text("just text\n", encoding="utf-8")
    good = _workbook(tmp_path / "good.xlsx")
    result = load_paths([broken, renamed, good])
    assert [d.name for d in result.documents] == ["good.xlsx"]
    messages = {error.path.name: error.message for error in result.errors}
    assert messages["broken.xlsx"].startswith("damaged spreadsheet")
    assert "\n" not in messages["broken.xlsx"]
    assert messages["notes.xlsx"].startswith("not a spreadsheet")


def test_column_names_follow_the_spreadsheet_letters() -> None:
    assert [column_name(i) for i in (0, 25, 26, 51, 52, 701, 702)] == [
        "A", "Z", "AA", "AZ", "BA", "ZZ", "AAA",
    ]  # fmt: skip
