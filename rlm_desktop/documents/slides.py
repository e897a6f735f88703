"""Presentation text (.pptx through python-pptx, .odp through odfdo; both imported lazily).

Slide by slide, in the deck's order, each slide a section labelled with its number:

    ## Slide 3: Quarterly results
    Revenue grew 12%
    Region	Sales
    North	40
    Notes: say the north did best

The header names the slide's number and its title (and says `(hidden)` for a slide hidden from
the show: hidden slides are read too). Then the text of its other shapes in the order the file
keeps them, which is the order PowerPoint's and Impress's screen readers follow (the selection
pane's, bottom to top): each paragraph a line, tables as tab-separated rows, groups read through.
Then the speaker notes, each line after `Notes: `. Charts, pictures and slide masters (their
footers) are not read.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import Extracted, SectionedText
from rlm_desktop.documents.opendocument import block_lines, open_odf
from rlm_desktop.documents.package import OLE_MAGIC, ZIP_MAGIC, check_package
from rlm_desktop.documents.package import problem as _problem

if TYPE_CHECKING:
    from odfdo import Document, DrawPage, Element
    from pptx.shapes.base import BaseShape
    from pptx.slide import Slide

PPTX_RESAVE = "open it in PowerPoint or LibreOffice and save it again as .pptx"
ODP_RESAVE = "open it in LibreOffice Impress and save it again as .odp"
_EITHER_RESAVE = "open it in PowerPoint or LibreOffice and save it again as .pptx or .odp"


def slide_text(number: int, title: str, hidden: bool, body: Iterable[str], notes: str) -> str:
    """One slide as the model reads it (see the module docstring)."""
    header = f"## Slide {number}{' (hidden)' if hidden else ''}"
    lines = [f"{header}: {title}" if title else header]
    lines.extend(line for line in body if line)
    lines.extend(f"Notes: {line}" for line in _lines(notes))
    return "\n".join(lines)


def _lines(text: str) -> list[str]:
    """The non-blank lines of `text`, whitespace runs made single spaces (python-pptx gives a
    line break inside a paragraph as a vertical tab)."""
    return [
        " ".join(line.split()) for line in text.replace("\v", "\n").splitlines() if line.strip()
    ]


def _shape_lines(shape: BaseShape) -> Iterator[str]:
    from pptx.shapes.group import GroupShape

    if isinstance(shape, GroupShape):
        for inner in shape.shapes:
            yield from _shape_lines(inner)
    elif getattr(shape, "has_table", False):
        for row in shape.table.rows:  # type: ignore[attr-defined]
            cells = ["; ".join(_lines(cell.text)) for cell in row.cells if not cell.is_spanned]
            yield "\t".join(cells).rstrip("\t")
    elif shape.has_text_frame:
        yield from _lines(shape.text_frame.text)  # type: ignore[attr-defined]


def _pptx_slide(number: int, slide: Slide) -> tuple[str, str]:
    title_shape = slide.shapes.title
    title = " ".join(_lines(title_shape.text_frame.text)) if title_shape is not None else ""
    body = (
        line
        for shape in slide.shapes
        if title_shape is None or shape.shape_id != title_shape.shape_id
        for line in _shape_lines(shape)
    )
    notes = ""
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        notes = frame.text if frame is not None else ""
    hidden = slide._element.get("show") in ("0", "false")
    return title, slide_text(number, title, hidden, body, notes)


def _extract_pptx(data: bytes) -> Extracted:
    from pptx import Presentation

    check_package(data, ".pptx", PPTX_RESAVE)
    try:
        deck = Presentation(io.BytesIO(data))
        text = SectionedText()
        for number, slide in enumerate(deck.slides, start=1):
            title, shown = _pptx_slide(number, slide)
            text.add("slide", str(number), shown, title)
    except Exception as error:
        raise Unreadable(f"damaged .pptx file ({_problem(error)}); {PPTX_RESAVE}") from error
    return Extracted(text.text, sections=tuple(text.sections))


def _odp_hidden(document: Document, page: DrawPage) -> bool:
    style_name = page.get_attribute_string("draw:style-name")
    if not style_name:
        return False
    style = document.get_style("drawing-page", style_name)
    properties = style.get_element("style:drawing-page-properties") if style else None
    return (
        properties is not None
        and properties.get_attribute_string("presentation:visibility") == "hidden"
    )


def _odp_title_and_body(page: Element) -> tuple[str, list[str]]:
    title, body = "", []
    for child in page.children:
        if child.tag == "presentation:notes":
            continue
        lines = list(block_lines(child))
        if not title and child.get_attribute_string("presentation:class") == "title":
            title = " ".join(lines)
        else:
            body.extend(lines)
    return title, body


def _extract_odp(data: bytes) -> Extracted:
    document = open_odf(data, ".odp", ODP_RESAVE)
    if document.get_type() not in ("presentation", "presentation-template"):
        raise Unreadable(f"not a presentation (an ODF {document.get_type()}); {ODP_RESAVE}")
    try:
        text = SectionedText()
        for number, page in enumerate(document.body.get_draw_pages(), start=1):
            title, body = _odp_title_and_body(page)
            notes = "\n".join(
                line
                for notes_page in page.get_elements("presentation:notes")
                for line in block_lines(notes_page)
            )
            shown = slide_text(number, title, _odp_hidden(document, page), body, notes)
            text.add("slide", str(number), shown, title)
    except Exception as error:
        raise Unreadable(f"damaged .odp file ({_problem(error)}); {ODP_RESAVE}") from error
    return Extracted(text.text, sections=tuple(text.sections))


def extract_slides(data: bytes) -> Extracted:
    """The deck's text, each slide a section; raise `Unreadable` for encrypted, hostile or
    damaged files. An OpenDocument presentation is told from a .pptx by its `mimetype` part,
    which ODF puts first in the package."""
    if not data.startswith((ZIP_MAGIC, OLE_MAGIC)):
        raise Unreadable(f"not a presentation (not a ZIP package); {_EITHER_RESAVE}")
    if data[30:38] == b"mimetype":
        return _extract_odp(data)
    return _extract_pptx(data)
