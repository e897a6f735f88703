"""Entity declarations are refused however the XML part spells them.

A parser reads an XML part in the encoding its byte-order mark or first bytes show (UTF-8, UTF-16
or UTF-32, either byte order, with a mark or without), switched by the XML declaration to any
encoding it names, and skips whitespace, comments and processing instructions before the document
type declaration. Each spelling here is one that lxml (libxml2, as the readers use it) reads with
the entity expanded, checked before the file is handed to the app; each file is a real package of
its format with that part swapped in.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from lxml import etree

from rlm_desktop.documents import load_paths
from rlm_desktop.documents.xml_entities import READ_CHUNK
from tests.documents.makers import make_docx, make_xlsx
from tests.documents.office_makers import (
    make_epub,
    make_odp,
    make_ods,
    make_odt,
    make_pptx,
    swap_part,
)
from tests.documents.test_office_formats import CHAPTERS, DECK, GOOD_TEXT

EXPANSION = "EXPANDED-BY-THE-PARSER"
DOCTYPE = f'<!DOCTYPE r [<!ENTITY lol9 "{EXPANSION}">]>'
UTF7_ENTITY = b"+ADwAIQ-ENTITY"
"""`<!ENTITY` in UTF-7: "<!" as base64 of its UTF-16, which libxml2 decodes when the declaration
says `encoding="UTF-7"`; no byte of it reads `<!ENTITY` in any Unicode form."""


@dataclass(frozen=True)
class Spelling:
    """How an attacker writes a part: its encoding, a byte-order mark, the encoding its XML
    declaration names (none: no declaration), and what comes before the document type."""

    encoding: str
    bom: bytes = b""
    declared: str | None = None
    before_doctype: str = ""
    straddling: bool = False
    """Whether a comment before the document type puts `<!ENTITY` across the boundary between
    two reads of the check."""
    doctype: str = DOCTYPE
    parsed_here: bool = True
    """Whether this lxml's libxml2 reads the encoding (this build reads no EBCDIC; a libxml2
    built with iconv's EBCDIC tables does)."""

    def encode(self, body: str) -> bytes:
        declaration = f'<?xml version="1.0" encoding="{self.declared}"?>' if self.declared else ""
        comment = self._comment(declaration) if self.straddling else ""
        text = declaration + self.before_doctype + comment + self.doctype + body
        data = self.bom + text.encode(self.encoding)
        return data.replace(b"<!ENTITY", UTF7_ENTITY) if self.encoding == "utf-7" else data

    @property
    def mark(self) -> bytes:
        """`<!ENTITY` as this spelling writes it."""
        return UTF7_ENTITY if self.encoding == "utf-7" else "<!ENTITY".encode(self.encoding)

    def _comment(self, declaration: str) -> str:
        """A comment that puts the middle of `<!ENTITY` on the check's read boundary."""
        head = self.bom + (declaration + self.before_doctype + "<!--").encode(self.encoding)
        unit = len(" ".encode(self.encoding))
        doctype_to_mark = DOCTYPE.index("<!ENTITY")
        filler = (
            READ_CHUNK - len(head) - (len("-->") + doctype_to_mark) * unit - len(self.mark) // 2
        )
        return "<!--" + " " * (filler // unit) + "-->"


SPELLINGS = {
    "utf8-crlf": Spelling("utf-8", before_doctype="\r\n"),
    "utf8-tab": Spelling("utf-8", before_doctype="\t \n"),
    "utf8-bom-crlf": Spelling("utf-8", bom=b"\xef\xbb\xbf", before_doctype="\r\n"),
    "utf8-comment-pi": Spelling(
        "utf-8", declared="UTF-8", before_doctype="\r\n<!-- note -->\n<?app x?>\r\n"
    ),
    "utf16le-bom": Spelling("utf-16-le", bom=b"\xff\xfe", before_doctype="\r\n"),
    "utf16be-bom": Spelling("utf-16-be", bom=b"\xfe\xff", before_doctype="\t"),
    "utf16le-declared": Spelling("utf-16-le", declared="UTF-16", before_doctype="\n"),
    "utf16be-declared": Spelling("utf-16-be", declared="UTF-16", before_doctype="\n"),
    "utf32le": Spelling("utf-32-le"),
    "utf32be": Spelling("utf-32-be"),
    "utf32be-declared": Spelling("utf-32-be", declared="UTF-32BE", before_doctype="\r\n"),
    "utf7": Spelling("utf-7", declared="UTF-7", before_doctype="\n"),
    "ebcdic": Spelling("cp037", declared="IBM037", before_doctype="\n", parsed_here=False),
    "utf8-straddling": Spelling("utf-8", before_doctype="\n", straddling=True),
    "utf32be-straddling": Spelling("utf-32-be", straddling=True),
    "utf7-straddling": Spelling("utf-7", declared="UTF-7", straddling=True),
}


@dataclass(frozen=True)
class Target:
    """A sample of a format, the XML part attacked in it and a phrase of that part."""

    make: Callable[[Path], Path]
    part: str
    phrase: str


TARGETS = {
    "odt": Target(lambda p: make_odt(p, "Heading", ["Text."]), "content.xml", "Text."),
    "odp": Target(lambda p: make_odp(p, DECK), "content.xml", "the slide-two phrase"),
    "docx": Target(
        lambda p: make_docx(p, "Title", ["Text one."]), "word/document.xml", "Text one."
    ),
    "pptx": Target(lambda p: make_pptx(p, DECK), "ppt/slides/slide2.xml", "the slide-two phrase"),
    "epub": Target(
        lambda p: make_epub(p, CHAPTERS), "EPUB/chapter3.xhtml", "the last-chapter phrase"
    ),
}


SPREADSHEETS = {
    "xlsx": Target(
        lambda p: make_xlsx(p, "Sheet", [["the cell phrase", 1]]),
        "xl/worksheets/sheet1.xml",
        "the cell phrase",
    ),
    "ods": Target(make_ods, "content.xml", "the cell phrase"),
}


def _body(original: bytes, phrase: str) -> str:
    """The part's text after its XML declaration and document type, the phrase a reference."""
    text = original.decode("utf-8")
    if text.startswith("<?xml"):
        text = text.split("?>", 1)[1]
    text = text.lstrip().removeprefix("<!DOCTYPE html>")
    assert phrase in text, phrase
    return text.lstrip().replace(phrase, "&lol9;")


def _attack(target: Target, spelling: Spelling, folder: Path, name: str) -> Path:
    sample = target.make(folder / f"sample-{name}")

    def write(handle: io.BufferedIOBase, original: bytes) -> None:
        handle.write(spelling.encode(_body(original, target.phrase)))

    return swap_part(sample, folder / f"attack-{name}", target.part, write)


def _part(path: Path, part: str) -> bytes:
    with zipfile.ZipFile(path) as package:
        return package.read(part)


@pytest.mark.parametrize("spelling", SPELLINGS.values(), ids=list(SPELLINGS))
def test_entities_are_refused_in_every_spelling_a_parser_reads(
    tmp_path: Path, spelling: Spelling
) -> None:
    attacks = {
        _attack(target, spelling, tmp_path, f"{suffix}.{suffix}"): target
        for suffix, target in TARGETS.items()
    }
    for path, target in attacks.items():
        part = _part(path, target.part)
        if spelling.straddling:
            start = part.index(spelling.mark)
            assert start < READ_CHUNK < start + len(spelling.mark)
        if spelling.parsed_here:  # a real attack: lxml reads it and expands the entity
            assert EXPANSION in "".join(etree.fromstring(part).itertext()), path.name
    good = tmp_path / "good.txt"
    good.write_text(GOOD_TEXT, encoding="utf-8")

    result = load_paths([*attacks, good])

    assert [document.path for document in result.documents] == [good]
    refused = {error.path: error.message for error in result.errors}
    assert set(refused) == set(attacks)
    for message in refused.values():
        assert message.startswith("its XML declares entities"), message


@pytest.mark.parametrize("spelling", SPELLINGS.values(), ids=list(SPELLINGS))
def test_spreadsheets_never_expand_entities(tmp_path: Path, spelling: Spelling) -> None:
    """Spreadsheets are read by calamine, whose XML reader knows no declared entities (so they
    skip the check): a declared entity is an unknown reference, refused in one line where the
    part is read, and a part in an encoding it does not read comes out empty."""
    attacks = [
        _attack(target, spelling, tmp_path, f"{suffix}.{suffix}")
        for suffix, target in SPREADSHEETS.items()
    ]

    result = load_paths(attacks)

    assert len(result.documents) + len(result.errors) == len(attacks)
    assert not [d.path for d in result.documents if EXPANSION in d.text]
    assert not [e.path for e in result.errors if EXPANSION in e.message or "\n" in e.message]
    if spelling.encoding == "utf-8":
        xlsx = next(e.message for e in result.errors if e.path.suffix == ".xlsx")
        assert xlsx == (
            "damaged spreadsheet (at 0..0: unrecognized entity `&lol9;`); open it and save it again"
        )


def test_a_declared_encoding_that_cannot_be_checked_is_refused(tmp_path: Path) -> None:
    """A part in an encoding Python cannot decode could spell `<!ENTITY` in bytes the check does
    not know: it is refused, not let through."""
    unknown = Spelling("utf-8", declared="X-NO-SUCH-ENCODING", doctype="", parsed_here=False)

    [error] = load_paths([_attack(TARGETS["odt"], unknown, tmp_path, "unknown.odt")]).errors

    assert error.message == (
        "its XML is in an encoding (X-NO-SUCH-ENCODING) that cannot be checked, so it was not "
        "read; open it in LibreOffice or Word and save it again as .odt"
    )
