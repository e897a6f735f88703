"""Spreadsheet text (.xlsx, .xlsm, .xls, .ods) through python-calamine (imported lazily).

Every sheet, in workbook order, under a `## Sheet: NAME (A1:F120)` line that names its used range;
then one tab-separated line per row of that range, so a line's place under its header and a value's
place in its line give back the cell (the range's first row and column are the header's). Formulas
come out as the values the file last cached for them; dates as ISO 8601; whole numbers without a
decimal point. Hidden sheets are read too, and say so. The reader runs in the bounded worker
process (`reader`): a zip bomb or a 20,000 × 1,000 sheet costs at most its time and memory bound.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterator, Sequence

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import Extracted, SectionedText
from rlm_desktop.documents.package import OLE_MAGIC, ZIP_MAGIC


def column_name(index: int) -> str:
    """The letters of the 0-based column `index`: 0 is A, 25 is Z, 26 is AA."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def cell_text(value: object) -> str:
    """One cell as the model reads it: tabs and line breaks inside it become spaces."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    return " ".join(str(value).split())


def _sheet_lines(
    name: str, rows: Sequence[Sequence[object]], start: tuple[int, int], hidden: bool
) -> Iterator[str]:
    first_row, first_column = start
    width = max((len(row) for row in rows), default=0)
    if rows and width:
        last = f"{column_name(first_column + width - 1)}{first_row + len(rows)}"
        where = f"{column_name(first_column)}{first_row + 1}:{last}"
    else:
        where = "empty"
    yield f"## Sheet: {name} ({where}{', hidden' if hidden else ''})"
    for row in rows:
        yield "\t".join(cell_text(value) for value in row).rstrip("\t")


def extract_spreadsheet(data: bytes) -> Extracted:
    """The workbook's text, each sheet a section; raise `Unreadable` for encrypted or damaged
    files."""
    from python_calamine import CalamineError, CalamineWorkbook, PasswordError, SheetVisibleEnum

    if not data.startswith((ZIP_MAGIC, OLE_MAGIC)):
        raise Unreadable("not a spreadsheet (the file is damaged or only named like one)")
    try:
        book = CalamineWorkbook.from_filelike(io.BytesIO(data))
        text = SectionedText()
        shown = SheetVisibleEnum.Visible
        hidden = {sheet.name for sheet in book.sheets_metadata if sheet.visible != shown}
        for name in book.sheet_names:
            sheet = book.get_sheet_by_name(name)
            rows = sheet.to_python(skip_empty_area=True)
            start = sheet.start or (0, 0)
            lines = _sheet_lines(name, rows, (start[0], start[1]), name in hidden)
            text.add("sheet", name, "\n".join(lines))
    except PasswordError as error:
        raise Unreadable(
            "password-protected spreadsheet; remove the password and save it again"
        ) from error
    except (CalamineError, ValueError, OSError) as error:
        raise Unreadable(f"damaged spreadsheet ({error}); open it and save it again") from error
    return Extracted(text.text, sections=tuple(text.sections))
