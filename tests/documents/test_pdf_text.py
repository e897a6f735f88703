"""PDF text through PDFium, with pypdf where PDFium cannot: typeset layouts, scans, fallbacks.

Every PDF is generated here; every load goes through `load_paths` and its bounded reader process.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from rlm_desktop.documents import LoadOptions, load_paths
from rlm_desktop.documents.pdfium_text import read_pages as read_with_pdfium
from rlm_desktop.documents.pypdf_text import read_pages as read_with_pypdf
from tests.cli import ROOT, run_python
from tests.documents.makers import _scan_image, make_pdf
from tests.documents.pdf_typeset import make_typeset_pdf, typeset_pages
from tests.qt_free import _BLOCKER

OCR = "run OCR first (e.g. `ocrmypdf in.pdf out.pdf`) to read them"
TURN_ON = (
    "turn OCR on (Settings → Run defaults; on the command line, leave out --no-ocr), "
    f"or {OCR}"
)


def test_a_typeset_two_column_pdf_reads_column_by_column_with_its_words_whole(
    tmp_path: Path,
) -> None:
    pages = typeset_pages(6)
    pdf = make_typeset_pdf(tmp_path / "typeset.pdf", pages)

    [document] = load_paths([pdf]).documents

    assert document.pages == len(pages)
    assert document.notes == ()
    assert document.text.split("\f") == [page.reading_text() for page in pages]
    hyphenated = [line for page in pages for column in page.columns for line in column]
    assert any(line.endswith("-") for line in hyphenated)  # the layout did break words
    assert "fi" in document.text  # shown as ligature glyphs, read back as letters


@pytest.mark.parametrize("kerned", [False, True], ids=["lines", "kerned"])
def test_pdfium_and_pypdf_agree_on_simply_generated_pdfs(tmp_path: Path, kerned: bool) -> None:
    lines = [
        f"{n}.{i} revenue (net) of the northern region rose 12.5%"
        for n in range(3)
        for i in range(4)
    ]
    pdf = make_pdf(tmp_path / "simple.pdf", [lines[:6], lines[6:]], kerned=kerned)

    by_pdfium = read_with_pdfium(pdf.read_bytes())
    by_pypdf = read_with_pypdf(pdf.read_bytes())

    assert by_pdfium == by_pypdf
    assert by_pdfium.texts == ["\n".join(lines[:6]), "\n".join(lines[6:])]


def test_a_scanned_page_drawn_through_a_form_xobject_needs_ocr(tmp_path: Path) -> None:
    pdf = _scan_in_a_form(tmp_path / "wrapped-scan.pdf")

    [document] = load_paths([pdf], LoadOptions(ocr=False)).documents

    assert document.text.split("\f") == ["Typed cover page", ""]
    assert document.notes == (f"needs OCR: no text layer on page 2 (scanned images); {TURN_ON}",)


def test_blank_pages_without_images_are_not_called_scans(tmp_path: Path) -> None:
    blank = make_pdf(tmp_path / "blank.pdf", [[], []])

    result = load_paths([blank])

    assert result.documents == []
    [error] = result.errors
    assert error.message == (
        "no text found (2 pages with neither text nor images: blank, text drawn as outlines, "
        "or content too large to read); if it shows text, run OCR first "
        "(e.g. `ocrmypdf in.pdf out.pdf`) and load the result"
    )


def test_a_pdf_that_pdfium_cannot_open_is_read_by_pypdf_and_says_so(tmp_path: Path) -> None:
    pdf = tmp_path / "bad-trailer.pdf"
    whole = make_pdf(tmp_path / "whole.pdf", [["First page"], ["Second page"]], compress=False)
    # The trailer points at an object that is not there; pypdf finds the catalog by scanning.
    pdf.write_bytes(re.sub(rb"/Root \d+ 0 R", b"/Root 99 0 R", whole.read_bytes()))

    [document] = load_paths([pdf]).documents

    assert document.text == "First page\fSecond page"
    assert document.notes == ("read with pypdf: PDFium cannot open it (Data format error)",)


def test_a_truncated_pdf_that_neither_can_open_gives_one_line(tmp_path: Path) -> None:
    whole = make_pdf(tmp_path / "whole.pdf", [[f"line {i}" for i in range(40)]] * 3).read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(whole[: len(whole) // 3])

    result = load_paths([cut])

    assert result.documents == []
    [error] = result.errors
    assert error.message.startswith("damaged PDF")
    assert error.message.endswith(
        "re-export it from the program that made it, or repair it (e.g. `qpdf in.pdf out.pdf`)"
    )
    assert "\n" not in error.message


LOAD = """
import json, sys
from rlm_desktop.documents import LoadOptions, load_paths

result = load_paths(sys.argv[1:])
print(json.dumps({
    "documents": [[d.name, d.text, list(d.notes)] for d in result.documents],
    "errors": [e.message for e in result.errors],
}))
"""


def test_without_pypdfium2_every_pdf_is_read_by_pypdf_in_the_reader(
    tmp_path: Path, isolated_home: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    # In the environment, so that the reader process (a fresh interpreter) cannot import it either.
    (site / "sitecustomize.py").write_text(
        _BLOCKER.format(blocked=["pypdfium2", "pypdfium2_raw"]), encoding="utf-8"
    )
    plain = make_pdf(tmp_path / "plain.pdf", [["Annual report 2024", "Revenue rose."]])
    mixed = make_pdf(tmp_path / "mixed.pdf", [["Typed cover page"], [], ["Typed end"]], scanned=[1])
    locked = make_pdf(tmp_path / "locked.pdf", [["top secret"]], password="s3cret")

    done = run_python(
        *("-c", LOAD, str(plain), str(mixed), str(locked)),
        home=isolated_home,
        env={"PYTHONPATH": os.pathsep.join((str(site), str(ROOT)))},
    )

    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    fallback = (
        "read with pypdf: PDFium (pypdfium2) cannot be imported "
        "(No module named 'pypdfium2' (blocked in this test))"
    )
    assert loaded["documents"] == [
        ["plain.pdf", "Annual report 2024\nRevenue rose.", [fallback]],
        [
            "mixed.pdf",
            "Typed cover page\f\fTyped end",
            [
                fallback,
                "needs OCR: no text layer on page 2 (scanned images); OCR cannot render them: "
                "PDFium (pypdfium2) cannot be imported (No module named 'pypdfium2' (blocked in "
                f"this test)); {OCR}",
            ],
        ],
    ]
    [locked_error] = loaded["errors"]
    assert locked_error.startswith("password-protected PDF")


def _scan_in_a_form(path: Path) -> Path:
    """Page 1 typed; page 2 a scan whose image is drawn by a form XObject, as some scanners do."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import (
        ArrayObject,
        DecodedStreamObject,
        DictionaryObject,
        FloatObject,
        NameObject,
    )

    typed = make_pdf(path.with_name("typed.pdf"), [["Typed cover page"], []])
    writer = PdfWriter(clone_from=PdfReader(typed))
    form = DecodedStreamObject()
    form.set_data(b"q 612 0 0 792 0 0 cm /Im0 Do Q")
    form.update(
        {
            NameObject("/Type"): NameObject("/XObject"),
            NameObject("/Subtype"): NameObject("/Form"),
            NameObject("/BBox"): ArrayObject([FloatObject(v) for v in (0, 0, 612, 792)]),
            NameObject("/Resources"): DictionaryObject(
                {
                    NameObject("/XObject"): DictionaryObject(
                        {NameObject("/Im0"): writer._add_object(_scan_image())}
                    )
                }
            ),
        }
    )
    page = writer.pages[1]
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/XObject"): DictionaryObject({NameObject("/Fm0"): writer._add_object(form)})}
    )
    content = DecodedStreamObject()
    content.set_data(b"/Fm0 Do")
    page.replace_contents(content)
    with path.open("wb") as handle:
        writer.write(handle)
    return path
