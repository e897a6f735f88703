"""Every supported format loads to the text an analyst expects, with correct metadata."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rlm_desktop.documents import DOCUMENT_TYPES, Document, load_paths
from rlm_desktop.engine.context import ContextDocument
from tests.documents.conftest import EXPECTED
from tests.documents.makers import make_pdf


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_format_loads_to_its_text(format_folder: Path, name: str) -> None:
    path = format_folder / name
    result = load_paths([path])
    assert result.errors == []
    [document] = result.documents
    kind, text = EXPECTED[name]
    assert document.type == kind
    assert document.text == text
    assert document.name == name
    assert document.path == path
    assert document.size == path.stat().st_size
    assert document.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert document.chars == len(text)
    assert document.tokens > 0
    assert document.type in DOCUMENT_TYPES


def test_html_drops_scripts_styles_and_markup(format_folder: Path) -> None:
    [page] = load_paths([format_folder / "page.html"]).documents
    for hidden in ("do not show", "color: red", "enable scripts", "<", "&amp;"):
        assert hidden not in page.text


def test_pdf_pages_are_separated_by_form_feeds(format_folder: Path) -> None:
    [pdf] = load_paths([format_folder / "report.pdf"]).documents
    assert pdf.pages == 2
    assert pdf.text.split("\f") == [
        "Annual report 2024\nRevenue rose (strongly).",
        "Page two: outlook.",
    ]


def test_kerned_pdf_text_gets_its_spaces_back(tmp_path: Path) -> None:
    lines = ["Quarterly revenue rose sharply in the northern region.", "Costs fell 3%."]
    pdf = make_pdf(tmp_path / "typeset.pdf", [lines], kerned=True)
    [document] = load_paths([pdf]).documents
    assert document.text == "\n".join(lines)


def test_long_pdf_pages_stay_in_order(tmp_path: Path) -> None:
    # Long enough to be shared between worker processes on a multi-core machine.
    pages = [[f"page {n} first line", f"page {n} last line"] for n in range(1, 301)]
    pdf = make_pdf(tmp_path / "long.pdf", pages)
    [document] = load_paths([pdf]).documents
    assert document.pages == 300
    assert document.text.split("\f") == [
        f"page {n} first line\npage {n} last line" for n in range(1, 301)
    ]


def test_folder_loads_every_format_in_name_order(format_folder: Path) -> None:
    result = load_paths([format_folder])
    assert result.errors == []
    assert result.skipped == []
    names = [d.name for d in result.documents]
    expected = [f"formats/{n}" for n in sorted(EXPECTED, key=str.casefold)]
    assert names == expected
    recognised = {"image"}  # OCR's text is not exact to the letter: tests/documents/test_ocr.py
    assert {d.type for d in result.documents} == set(DOCUMENT_TYPES) - recognised
    assert result.totals.chars == sum(len(text) for _, text in EXPECTED.values())
    assert result.totals.tokens == sum(d.tokens for d in result.documents)


def test_to_context_gives_the_engine_its_document(format_folder: Path) -> None:
    [document] = load_paths([format_folder / "notes.txt"]).documents
    context = document.to_context()
    assert context == ContextDocument(
        name="notes.txt",
        text="Plain notes.\nSecond line.\n",
        path=str(format_folder / "notes.txt"),
        tokens=document.tokens,
        type="text",
    )
    assert context.meta()["chars"] == document.chars


def test_paths_load_in_the_order_given(format_folder: Path) -> None:
    order = ["sales.csv", "main.py", "notes.txt"]
    result = load_paths([format_folder / n for n in order])
    assert [d.name for d in result.documents] == order
    assert [c.name for c in result.contexts()] == order


def test_same_file_named_twice_loads_once(format_folder: Path) -> None:
    notes = format_folder / "notes.txt"
    result = load_paths([notes, format_folder])
    assert [d.name for d in result.documents].count("notes.txt") == 1
    assert "formats/notes.txt" not in [d.name for d in result.documents]
    assert [s.path for s in result.skipped] == [notes]
    assert result.skipped[0].reason.startswith("already loaded")


def test_document_repr_does_not_dump_the_text(format_folder: Path) -> None:
    [document] = load_paths([format_folder / "notes.txt"]).documents
    assert isinstance(document, Document)
    assert "Plain notes" not in repr(document)
