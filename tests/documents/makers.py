"""Builders for binary test documents, so no binary file is committed.

PDFs are written with pypdf's object model: one Helvetica font and a plain text content stream per
page, which is what simple report generators produce. DOCX files come from python-docx.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject, NumberObject


def _escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _kerned(line: str) -> str:
    """A TJ array as typesetters write it: words placed by offsets, long words kerned inside."""
    parts = []
    for word in line.split(" "):
        if len(word) > 4:
            parts.append(f"({_escape(word[:2])}) -15 ({_escape(word[2:])})")
        else:
            parts.append(f"({_escape(word)})")
    return "[" + " -278 ".join(parts) + "] TJ T*"


def make_pdf(
    path: Path,
    pages: Sequence[Sequence[str]],
    password: str | None = None,
    compress: bool = True,
    kerned: bool = False,
    scanned: Sequence[int] = (),
) -> Path:
    """Write a PDF whose pages show the given lines of text; encrypt it when `password` is set.

    Lines are single `Tj` strings, or with `kerned` TJ arrays without space characters, which
    are slower to extract and need the extractor to infer the spaces. The pages numbered in
    `scanned` (0-based) also carry a full-page greyscale image, as a scanner makes them.
    """
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
            NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
        }
    )
    for number, lines in enumerate(pages):
        page = writer.add_blank_page(612, 792)
        resources = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        page[NameObject("/Resources")] = resources
        shown = [_kerned(x) if kerned else f"({_escape(x)}) Tj T*" for x in lines]
        body = ["BT /F1 10 Tf 12 TL 50 750 Td", *shown, "ET"]
        if number in scanned:
            image = writer._add_object(_scan_image())
            resources[NameObject("/XObject")] = DictionaryObject({NameObject("/Im0"): image})
            body = ["q 612 0 0 792 0 0 cm /Im0 Do Q", *body]
        stream = DecodedStreamObject()
        stream.set_data("\n".join(body).encode("cp1252"))
        page.replace_contents(stream)
        if compress:
            page.compress_content_streams()
    if password is not None:
        writer.encrypt(user_password=password, algorithm="AES-128")
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def _scan_image(width: int = 8, height: int = 10) -> DecodedStreamObject:
    """A tiny greyscale image XObject (a page photo, as far as a PDF reader can tell)."""
    image = DecodedStreamObject()
    image.set_data(bytes((x * 29 + y * 13) % 256 for y in range(height) for x in range(width)))
    image.update(
        {
            NameObject("/Type"): NameObject("/XObject"),
            NameObject("/Subtype"): NameObject("/Image"),
            NameObject("/Width"): NumberObject(width),
            NameObject("/Height"): NumberObject(height),
            NameObject("/ColorSpace"): NameObject("/DeviceGray"),
            NameObject("/BitsPerComponent"): NumberObject(8),
        }
    )
    return image


def make_docx(
    path: Path, title: str, paragraphs: Sequence[str], table: Sequence[Sequence[str]] = ()
) -> Path:
    """Write a Word file with a heading, paragraphs, a bullet and (optionally) a table."""
    import docx

    document = docx.Document()
    document.add_heading(title, level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    document.add_paragraph("a bulleted point", style="List Bullet")
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    document.save(str(path))
    return path


def make_slow_pdf(path: Path, pages: int = 20, operators: int = 900_000) -> Path:
    """A PDF of a few kilobytes that keeps a text extractor busy for many minutes.

    One compressed content stream of `operators` text-showing operators (about 7 bytes each once
    inflated; pypdf parses a stream of up to 2 million tokens, each in pure Python) is shared by
    every page, so the work is multiplied by `pages` while the file stays tiny.
    """
    from pypdf.generic import StreamObject

    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    content = DecodedStreamObject()
    content.set_data(b"BT /F1 10 Tf 50 750 Td " + b"(A) Tj " * operators + b"ET")
    compressed: StreamObject = content.flate_encode(level=9)
    shared = writer._add_object(compressed)
    for _ in range(pages):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        page[NameObject("/Contents")] = shared
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def make_docx_bomb(path: Path, inflated_bytes: int = 100_000_000) -> Path:
    """A Word file of a few hundred kilobytes whose document part inflates to `inflated_bytes`
    of paragraphs (python-docx needs several times that in memory to parse it)."""
    import zipfile

    template = make_docx(path.with_name(path.stem + "-template.docx"), "Bomb", ["x"])
    paragraph = b"<w:p><w:r><w:t>" + b"A" * 40 + b"</w:t></w:r></w:p>"
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as bomb,
    ):
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                head, tail = data.split(b"<w:body>", 1)
                data = head + b"<w:body>" + paragraph * (inflated_bytes // len(paragraph)) + tail
            bomb.writestr(item.filename, data)
    template.unlink()
    return path


def make_xlsx(path: Path, sheet: str, rows: list[list[object]]) -> Path:
    """A one-sheet workbook written by openpyxl, `rows` from A1."""
    import openpyxl

    book = openpyxl.Workbook()
    active = book.active
    assert active is not None
    active.title = sheet
    for row in rows:
        active.append(row)
    book.save(path)
    return path


def make_xlsx_bomb(path: Path, rows: int = 400_000, columns: int = 50) -> Path:
    """A workbook of a few hundred kilobytes whose one sheet holds `rows` × `columns` numbers
    (20 million cells by default: its XML inflates to hundreds of megabytes, and a reader holds
    each cell in memory)."""
    import zipfile

    template = make_xlsx(path.with_name(path.stem + "-template.xlsx"), "Bomb", [[1]])
    cells = b"".join(b'<c t="n"><v>7</v></c>' for _ in range(columns))
    row = b"<row>" + cells + b"</row>"
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as bomb,
    ):
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename != "xl/worksheets/sheet1.xml":
                bomb.writestr(item.filename, data)
                continue
            head, rest = data.split(b"<sheetData>", 1)
            tail = rest.split(b"</sheetData>", 1)[1]
            with bomb.open(item.filename, "w") as sheet:
                sheet.write(head + b"<sheetData>")
                for _ in range(rows // 1000):
                    sheet.write(row * 1000)
                sheet.write(b"</sheetData>" + tail)
    template.unlink()
    return path
