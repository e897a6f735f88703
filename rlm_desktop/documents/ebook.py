"""E-book (.epub) text through ebooklib (imported lazily), each chapter a section.

Chapters come in reading order (the spine), each one's body as `htmltext` renders a page: block
elements on lines of their own, table cells tab-separated. A chapter is labelled with its title in
the table of contents (the EPUB 3 navigation document, else the EPUB 2 NCX), else its first
heading, else its file name. Items the spine marks non-linear (notes, answers a book links to)
are read too, where the spine has them: their text is part of the book. The navigation document
itself is not (its text is the chapter titles the sections already carry), nor are chapters with
no text (a cover picture). Books locked by DRM are refused.
"""

from __future__ import annotations

import io
import posixpath
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rlm_desktop.documents.decoding import Unreadable
from rlm_desktop.documents.extract import Extracted, SectionedText
from rlm_desktop.documents.htmltext import html_to_text
from rlm_desktop.documents.package import check_package, problem

if TYPE_CHECKING:
    import zipfile

RESAVE = "open it in Calibre or another e-book editor and save it again as .epub"
_HEADINGS = "//h1|//h2|//h3|//h4|//h5|//h6"
_ENCRYPTION_NS = {"enc": "http://www.w3.org/2001/04/xmlenc#"}


def _toc_titles(entries: Any) -> Iterator[tuple[str, str]]:
    """(file name, title) for every entry of ebooklib's nested table of contents, in order."""
    from ebooklib import epub

    for entry in entries:
        if isinstance(entry, tuple | list):
            yield from _toc_titles(entry)
        elif isinstance(entry, epub.Link | epub.Section) and entry.href and entry.title:
            yield posixpath.normpath(entry.href.split("#")[0]), " ".join(entry.title.split())


def _chapter(content: bytes) -> tuple[str, str]:
    """A chapter's first heading and the text of its body (not its `<head>`)."""
    from lxml import etree, html

    if not content.strip():
        return "", ""
    tree = html.document_fromstring(content)
    headings = tree.xpath(_HEADINGS)
    heading = " ".join(headings[0].text_content().split()) if headings else ""
    body = tree.find("body")
    markup = etree.tostring(body if body is not None else tree, encoding="unicode", method="html")
    return heading, html_to_text(markup)


def _refuse_drm(package: zipfile.ZipFile) -> None:
    """Raise `Unreadable` when the book's chapters are encrypted (fonts may be obfuscated in a
    book without DRM: that is no reason to refuse it)."""
    from lxml import etree

    try:
        listing = package.read("META-INF/encryption.xml")
    except KeyError:
        return
    parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    root = etree.fromstring(listing, parser)
    uris = (
        root.xpath("//enc:CipherReference/@URI", namespaces=_ENCRYPTION_NS)
        if root is not None
        else []
    )
    if any(str(uri).lower().endswith((".html", ".xhtml", ".htm")) for uri in uris):
        raise Unreadable(
            "the e-book is locked by DRM (its chapters are encrypted); load a copy without DRM"
        )


def extract_epub(data: bytes) -> Extracted:
    """The book's text, each chapter a section; raise `Unreadable` for DRM-locked, hostile or
    damaged files."""
    from ebooklib import epub

    _refuse_drm(check_package(data, ".epub", RESAVE))
    try:
        book = epub.read_epub(io.BytesIO(data), {"ignore_ncx": True})
        titles: dict[str, str] = {}
        for name, title in _toc_titles(book.toc):
            titles.setdefault(name, title)
        text = SectionedText()
        for idref, _linear in book.spine:
            item = book.get_item_with_id(idref)
            if not isinstance(item, epub.EpubHtml) or isinstance(item, epub.EpubNav):
                continue
            heading, body = _chapter(item.content or b"")
            if not body.strip():
                continue
            name = posixpath.normpath(item.file_name)
            label = titles.get(name) or heading or posixpath.basename(name)
            text.add("chapter", label, body)
    except Exception as error:
        raise Unreadable(f"damaged .epub file ({problem(error)}); {RESAVE}") from error
    return Extracted(text.text, sections=tuple(text.sections))
