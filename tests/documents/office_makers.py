"""Builders for slides, OpenDocument text and spreadsheets, e-books and rich text, so no binary
file is committed.

Each format is written by the library that reads it (python-pptx, odfdo, ebooklib); RTF by hand,
as it is text. The hostile files start from one of these and swap in a part: a zip bomb (one part
inflating to a gigabyte), "billion laughs" (nested entities) and an external entity (XXE).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SlideSpec:
    """One slide: its title, text boxes (one line each), a table, a group of text boxes, speaker
    notes, and whether it is hidden."""

    title: str
    boxes: Sequence[str] = ()
    table: Sequence[Sequence[str]] = ()
    grouped: Sequence[str] = ()
    notes: str = ""
    hidden: bool = False


def make_pptx(path: Path, slides: Sequence[SlideSpec]) -> Path:
    """A deck written by python-pptx: a "Title Only" slide per spec, its boxes stacked below."""
    from pptx import Presentation
    from pptx.util import Inches, Pt

    deck = Presentation()
    layout = deck.slide_layouts[5]  # "Title Only"
    for spec in slides:
        slide = deck.slides.add_slide(layout)
        assert slide.shapes.title is not None
        slide.shapes.title.text = spec.title
        top = 1.5
        for line in spec.boxes:
            box = slide.shapes.add_textbox(Inches(0.5), Inches(top), Inches(9), Inches(0.4))
            box.text_frame.text = line
            box.text_frame.paragraphs[0].runs[0].font.size = Pt(14)
            top += 0.5
        if spec.table:
            rows, columns = len(spec.table), len(spec.table[0])
            frame = slide.shapes.add_table(
                rows, columns, Inches(0.5), Inches(top), Inches(9), Inches(0.3 * rows)
            )
            for r, row in enumerate(spec.table):
                for c, value in enumerate(row):
                    frame.table.cell(r, c).text = value
            top += 0.3 * rows + 0.2
        if spec.grouped:
            group = slide.shapes.add_group_shape()
            for number, line in enumerate(spec.grouped):
                left = Inches(0.5 + 3 * number)
                box = group.shapes.add_textbox(left, Inches(top), Inches(2.5), Inches(0.4))
                box.text_frame.text = line
        if spec.notes:
            notes_frame = slide.notes_slide.notes_text_frame
            assert notes_frame is not None
            notes_frame.text = spec.notes
        if spec.hidden:
            slide._element.set("show", "0")
    deck.save(str(path))
    return path


def make_odp(path: Path, slides: Sequence[SlideSpec]) -> Path:
    """An OpenDocument presentation written by odfdo, one draw page per spec."""
    from odfdo import Document, DrawPage, Element, Frame, PresentationNotes, Style, Table

    document = Document("presentation")
    document.body.clear()
    hidden = Style("drawing-page", name="hidden-page")
    hidden.append(
        Element.from_tag('<style:drawing-page-properties presentation:visibility="hidden"/>')
    )
    document.insert_style(hidden, automatic=True)
    for number, spec in enumerate(slides, start=1):
        page = DrawPage(f"page{number}", name=f"page{number}")
        if spec.hidden:
            page.set_attribute("draw:style-name", "hidden-page")
        size, place = ("20cm", "2cm"), ("1cm", "1cm")
        page.append(
            Frame.text_frame(spec.title, presentation_class="title", size=size, position=place)
        )
        for row, line in enumerate(spec.boxes, start=2):
            page.append(Frame.text_frame(line, size=size, position=("1cm", f"{row * 2}cm")))
        if spec.table:
            table = Table("table", width=len(spec.table[0]), height=len(spec.table))
            for r, values in enumerate(spec.table):
                table.set_row_values(r, list(values))
            frame = Frame(size=("20cm", "5cm"), position=("1cm", "12cm"))
            frame.append(table)
            page.append(frame)
        if spec.grouped:
            group = Element.from_tag("<draw:g/>")
            for line in spec.grouped:
                group.append(Frame.text_frame(line, size=("5cm", "1cm"), position=("1cm", "18cm")))
            page.append(group)
        if spec.notes:
            notes = PresentationNotes()
            notes.append(Frame.text_frame(spec.notes, presentation_class="notes"))
            page.append(notes)
        document.body.append(page)
    document.save(path)
    return path


def make_odt(
    path: Path,
    heading: str,
    paragraphs: Sequence[str],
    items: Sequence[str] = (),
    table: Sequence[Sequence[str]] = (),
) -> Path:
    """An OpenDocument text written by odfdo: a heading, paragraphs, a list and a table."""
    from odfdo import Document, Header, List, Paragraph, Table

    document = Document("text")
    document.body.clear()
    document.body.append(Header(1, heading))
    for text in paragraphs:
        document.body.append(Paragraph(text))
    if items:
        document.body.append(List(list(items)))
    if table:
        grid = Table("table", width=len(table[0]), height=len(table))
        for r, values in enumerate(table):
            grid.set_row_values(r, list(values))
        document.body.append(grid)
    document.save(path)
    return path


def make_ods(
    path: Path, sheet: str = "Sheet", row: Sequence[str] = ("the cell phrase", "1")
) -> Path:
    """An OpenDocument spreadsheet written by odfdo: one sheet of one row."""
    from odfdo import Document, Table

    document = Document("spreadsheet")
    document.body.clear()
    table = Table(sheet, width=len(row), height=1)
    table.set_row_values(0, list(row))
    document.body.append(table)
    document.save(path)
    return path


def make_epub(path: Path, chapters: Sequence[tuple[str, Sequence[str]]]) -> Path:
    """An EPUB 3 written by ebooklib: a chapter per (title, paragraphs), each under an `<h1>`,
    listed in the navigation document (and an NCX) and read in order (the spine)."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("test-book")
    book.set_title("A test book")
    book.set_language("en")
    items = []
    for number, (title, paragraphs) in enumerate(chapters, start=1):
        body = "".join(f"<p>{text}</p>" for text in paragraphs)
        item = epub.EpubHtml(title=title, file_name=f"chapter{number}.xhtml", lang="en")
        item.content = f"<h1>{title}</h1>{body}"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)
    return path


def make_rtf(path: Path, paragraphs: Sequence[str]) -> Path:
    """A rich text file as WordPad writes one: a font table, then a `\\par` per paragraph."""
    body = "".join(f"\\f0\\fs22 {text}\\par\n" for text in paragraphs)
    header = "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fnil\\fcharset0 Calibri;}}\n"
    path.write_text(header + body + "}\n", encoding="ascii")
    return path


def swap_part(source: Path, path: Path, part: str, write: object) -> Path:
    """Copy the package `source` to `path`, its `part` written by `write(handle, original)`."""
    with (
        zipfile.ZipFile(source) as package,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as copy,
    ):
        for item in package.infolist():
            data = package.read(item.filename)
            if item.filename != part:
                copy.writestr(item, data)
                continue
            with copy.open(item.filename, "w", force_zip64=True) as handle:
                write(handle, data)  # type: ignore[operator]
    return path


def make_zip_bomb(source: Path, path: Path, part: str, inflated_bytes: int = 1 << 30) -> Path:
    """The package `source` with its XML `part` grown by a comment to `inflated_bytes` (a few
    megabytes on disk)."""
    filler = b"A" * (1 << 20)

    def write(handle: io.BufferedIOBase, original: bytes) -> None:
        head, rest = original.split(b"?>", 1) if original.startswith(b"<?xml") else (b"", original)
        handle.write(head + b"?><!--" if head else b"<!--")
        for _ in range(inflated_bytes // len(filler)):
            handle.write(filler)
        handle.write(b"-->" + rest)

    return swap_part(source, path, part, write)


BILLION_LAUGHS = b"""<!DOCTYPE lolz [<!ENTITY lol "lol">
<!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
<!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
<!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
<!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
<!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
<!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">]>"""
"""A document type declaration whose `&lol9;` expands to a billion "lol"s."""

EXTERNAL_ENTITY = b"""<!DOCTYPE r [<!ENTITY lol9 SYSTEM "file:///etc/passwd">]>"""
"""A declaration whose `&lol9;` would be the contents of /etc/passwd, were it resolved."""


def make_entity_attack(
    source: Path, path: Path, part: str, phrase: str, declaration: bytes
) -> Path:
    """The package `source` with `declaration` before its XML `part`'s root element, and the
    text `phrase` in that part replaced by a reference to the entity `lol9`."""

    def write(handle: io.BufferedIOBase, original: bytes) -> None:
        assert phrase.encode() in original, (part, phrase)
        head, rest = original.split(b"?>", 1) if original.startswith(b"<?xml") else (b"", original)
        body = rest.replace(phrase.encode(), b"&lol9;")
        handle.write((head + b"?>" if head else b"") + declaration + body)

    return swap_part(source, path, part, write)
