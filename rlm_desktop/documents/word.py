"""Word (.docx) text through python-docx (imported lazily).

Paragraphs and tables come out in document order. Headings become Markdown-style `#` lines and list
items `- ` lines, so the structure survives; table rows become tab-separated lines. Headers,
footers, footnotes and comments are not read.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import Extracted
from rlm_desktop.documents.package import check_package

if TYPE_CHECKING:
    from docx.table import Table
    from docx.text.paragraph import Paragraph

_RESAVE = "open it in Word or LibreOffice and save it again as .docx"


def _paragraph_line(paragraph: Paragraph) -> str:
    text = paragraph.text
    style = (paragraph.style.name if paragraph.style is not None else None) or ""
    if style == "Title":
        return f"# {text}"
    if style.startswith("Heading "):
        level = style.removeprefix("Heading ").strip()
        if level.isdigit():
            return f"{'#' * min(int(level), 6)} {text}"
    if style.startswith("List") and text:
        return f"- {text}"
    return text


def _table_lines(table: Table) -> Iterator[str]:
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            if cell._tc is previous:  # a merged cell is repeated once per grid column it spans
                continue
            previous = cell._tc
            cells.append(" ".join(cell.text.split()))
        yield "\t".join(cells)


def extract_docx(data: bytes) -> Extracted:
    """The document's text; raise `Unreadable` for encrypted, legacy, hostile (`check_package`)
    or damaged files."""
    import docx
    from docx.table import Table

    check_package(data, ".docx", _RESAVE)
    try:
        document = docx.Document(io.BytesIO(data))
        lines: list[str] = []
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                lines.extend(_table_lines(block))
            else:
                lines.append(_paragraph_line(block))
    except Exception as exc:
        reason = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise Unreadable(f"damaged .docx file ({reason}); {_RESAVE}") from exc
    return Extracted("\n".join(lines))
