"""Typeset PDFs as a typesetter writes them, built with pypdf's object model (no binary committed).

A page has a running header, two justified columns and a footer. Every line is placed with its own
text matrix and shown by one TJ array without space characters: the gaps between words are
offsets (wider on some lines, as justification makes them), long words are kerned inside, "fi" is
a ligature glyph, and a word that does not fit is hyphenated at the line's end. The columns are
written one after the other, the left first, as layout programs do.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    NumberObject,
)

WORDS = [
    "the",
    "quarterly",
    "revenue",
    "of",
    "our",
    "northern",
    "region",
    "increased",
    "substantially",
    "while",
    "operating",
    "margins",
    "narrowed",
    "because",
    "supplier",
    "contracts",
    "were",
    "renegotiated",
    "after",
    "an",
    "independent",
    "audit",
    "identified",
    "significant",
    "risk",
    "in",
    "the",
    "financial",
    "forecasting",
    "methodology",
    "and",
    "the",
    "affiliated",
    "offices",
    "reported",
    "efficiency",
    "gains",
    "of",
    "12.5%",
    "(adjusted)",
    "across",
    "every",
    "division",
]
LIGATURE = "\x01"
"""The byte that shows the "fi" ligature glyph (Differences encoding)."""
COLUMN_X = (56, 316)
LINE_CHARS = 44
LINES_PER_COLUMN = 52


@dataclass(frozen=True)
class TypesetPage:
    """One page: a header, columns of lines (a line ending in "-" breaks a word), a footer."""

    header: str
    columns: tuple[tuple[str, ...], ...]
    footer: str

    def reading_text(self) -> str:
        """The page as a reader should give it: header, left column, right column, footer, a word
        hyphenated at a line's end whole on the line it starts (the rest of its line follows)."""
        lines = [self.header]
        for column in self.columns:
            joined = False
            for shown in column:
                line = shown
                if joined:
                    first, _, line = line.partition(" ")
                    lines[-1] += first
                joined = line.endswith("-")
                if line:
                    lines.append(line.removesuffix("-"))
        lines.append(self.footer)
        return "\n".join(lines)


def typeset_pages(count: int, seed: int = 1) -> list[TypesetPage]:
    """`count` pages of two columns filled with words, some hyphenated at the line's end."""
    rng = random.Random(seed)
    pages = []
    for number in range(1, count + 1):
        columns = tuple(_column(rng) for _ in COLUMN_X)
        pages.append(TypesetPage(f"Annual report 2024 — section {number}", columns, f"{number}"))
    return pages


def _column(rng: random.Random) -> tuple[str, ...]:
    lines: list[str] = []
    line = ""
    while len(lines) < LINES_PER_COLUMN:
        word = rng.choice(WORDS)
        room = LINE_CHARS - len(line) - (1 if line else 0)
        if len(word) <= room:
            line = f"{line} {word}" if line else word
            continue
        if len(word) >= 8 and room >= 5:  # hyphenate: the word's head ends this line
            cut = min(room - 1, len(word) - 3)
            lines.append(f"{line} {word[:cut]}-")
            line = word[cut:]
        else:
            lines.append(line)
            line = word
    if lines[-1].endswith("-"):  # a column never ends mid-word
        lines[-1] = lines[-1][:-1].rpartition(" ")[0] or lines[-1]
    return tuple(lines)


def make_typeset_pdf(path: Path, pages: Sequence[TypesetPage]) -> Path:
    """Write `pages` as a typeset PDF (see the module's docstring)."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Times-Roman"),
            NameObject("/Encoding"): DictionaryObject(
                {
                    NameObject("/Type"): NameObject("/Encoding"),
                    NameObject("/BaseEncoding"): NameObject("/WinAnsiEncoding"),
                    NameObject("/Differences"): ArrayObject(
                        [NumberObject(ord(LIGATURE)), NameObject("/fi")]
                    ),
                }
            ),
        }
    )
    font_ref = writer._add_object(font)
    rng = random.Random(len(pages))
    for page in pages:
        pdf_page = writer.add_blank_page(612, 792)
        pdf_page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font_ref})}
        )
        body = ["BT /F1 9 Tf", _shown(36, 760, page.header, rng)]
        for x, column in zip(COLUMN_X, page.columns, strict=True):
            body += [_shown(x, 730 - 13 * n, line, rng) for n, line in enumerate(column)]
        body += [_shown(300, 30, page.footer, rng), "ET"]
        stream = DecodedStreamObject()
        stream.set_data("\n".join(body).encode("cp1252"))
        pdf_page.replace_contents(stream)
        pdf_page.compress_content_streams()
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def _shown(x: int, y: int, line: str, rng: random.Random) -> str:
    """One line placed by its text matrix and shown as a TJ array without spaces."""
    gap = -rng.choice((250, 280, 330, 400))  # justified: the word gap differs between lines
    parts = [_kerned(word) for word in line.split(" ")]
    return f"1 0 0 1 {x} {y} Tm [" + f" {gap} ".join(parts) + "] TJ"


def _kerned(word: str) -> str:
    """A word's glyphs, with "fi" as its ligature and a kerning pair inside long words."""
    shown = word.replace("fi", LIGATURE)
    if len(shown) > 5:
        return f"({_escape(shown[:3])}) 18 ({_escape(shown[3:])})"
    return f"({_escape(shown)})"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
