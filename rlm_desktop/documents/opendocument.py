"""OpenDocument text (.odt) through odfdo (imported lazily); `open_odf` for .odt and .odp.

The text comes out in document order: headings as Markdown-style `#` lines (their outline level),
paragraphs as lines, list items as `- ` lines (indented two spaces per nesting level), table rows
as tab-separated lines. Sections, frames, text boxes and shapes are read through for the blocks
they hold. Page headers and footers, and the text of embedded objects, are not read.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import Extracted
from rlm_desktop.documents.package import CONVERT, check_package, problem

if TYPE_CHECKING:
    from odfdo import Document, Element, Table

ODT_RESAVE = "open it in LibreOffice or Word and save it again as .odt"


def refuse_encrypted_odf(package: zipfile.ZipFile, what: str, resave: str) -> None:
    """Raise `Unreadable` when the ODF package's manifest says its parts are encrypted."""
    try:
        manifest = package.read("META-INF/manifest.xml")
    except KeyError:
        return
    if b"encryption-data" in manifest:
        raise Unreadable(
            f"password-protected {what} file; open it, remove the password and {resave}"
        )


def paragraph_lines(element: Element) -> list[str]:
    """A paragraph's or heading's text, one entry per line it breaks into."""
    return [" ".join(line.split()) for line in str(element).split("\n") if line.strip()]


def _list_lines(element: Element, depth: int) -> Iterator[str]:
    indent = "  " * depth
    for item in element.children:
        for child in item.children:
            if child.tag == "text:list":
                yield from _list_lines(child, depth + 1)
            elif child.tag in ("text:p", "text:h"):
                for line in paragraph_lines(child):
                    yield f"{indent}- {line}"
            else:
                yield from (f"{indent}- {line}" for line in block_lines(child))


def _table_lines(table: Table) -> Iterator[str]:
    for row in table.iter_rows():
        cells = ["; ".join(paragraph_lines(cell)) for cell in row.iter_cells()]
        line = "\t".join(cells).rstrip("\t")
        if line:
            yield line


def block_lines(element: Element) -> Iterator[str]:
    """The lines of an ODF element's text: headings, paragraphs, lists and tables, and the ones
    inside the containers it holds (sections, frames, text boxes, shapes)."""
    from odfdo import Table

    tag = element.tag
    if tag == "text:h":
        level = int(element.get_attribute_integer("text:outline-level") or 1)
        yield from (f"{'#' * min(max(level, 1), 6)} {line}" for line in paragraph_lines(element))
    elif tag == "text:p":
        yield from paragraph_lines(element)
    elif tag == "text:list":
        yield from _list_lines(element, 0)
    elif isinstance(element, Table):
        yield from _table_lines(element)
    elif tag not in _SKIPPED:
        for child in element.children:
            yield from block_lines(child)


_SKIPPED = frozenset(
    ("text:sequence-decls", "text:tracked-changes", "office:forms", "draw:image", "svg:title")
)


def open_odf(data: bytes, what: str, resave: str) -> Document:
    """An odfdo `Document` of the package in `data`, checked (`check_package`)."""
    from odfdo import Document
    from odfdo.security import SecurityError

    package = check_package(data, what, resave)
    refuse_encrypted_odf(package, what, resave)
    try:
        return Document(io.BytesIO(data))
    except SecurityError as error:  # odfdo's own zip-bomb limits (a compression ratio)
        raise Unreadable(f"{problem(error)}; {CONVERT}") from error
    except Exception as error:
        raise Unreadable(f"damaged {what} file ({problem(error)}); {resave}") from error


def extract_odt(data: bytes) -> Extracted:
    """The text document's text; raise `Unreadable` for encrypted, hostile or damaged files."""
    document = open_odf(data, ".odt", ODT_RESAVE)
    if document.get_type() not in ("text", "text-template"):
        raise Unreadable(f"not a text document (an ODF {document.get_type()}); {ODT_RESAVE}")
    try:
        lines = list(block_lines(document.body))
    except Exception as error:
        raise Unreadable(f"damaged .odt file ({problem(error)}); {ODT_RESAVE}") from error
    return Extracted("\n".join(lines))
