"""Slides (.pptx, .odp), OpenDocument text, e-books and rich text load through the real loader
(and its bounded reader): every phrase reaches the text, slides and chapters are sections at
their offsets, and damaged or hostile files are one line each while the other files load."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from rlm_desktop.documents import LoadResult, load_paths
from tests.documents.office_makers import (
    BILLION_LAUGHS,
    EXTERNAL_ENTITY,
    SlideSpec,
    make_entity_attack,
    make_epub,
    make_odp,
    make_odt,
    make_pptx,
    make_rtf,
    make_zip_bomb,
)
from tests.documents.test_hostile_input import LIMIT_MB, bounded_load

GOOD_TEXT = "The good file still loads.\n"

DECK = [
    SlideSpec("Opening", boxes=["Welcome to the review"], notes="the notes-only phrase"),
    SlideSpec(
        "Middle",
        boxes=["the slide-two phrase", "a second box"],
        table=[["Region", "Sales"], ["the table-only phrase", "40"]],
        grouped=["a grouped phrase", "its neighbour"],
        hidden=True,
    ),
    SlideSpec("Closing", boxes=["Thank you"], notes="first note line\nsecond note line"),
]

CHAPTERS = [
    ("Prologue", ["It was a quiet morning.", "Nobody came."]),
    ("The Middle", ["Things happened."]),
    ("Epilogue", ["the last-chapter phrase"]),
]


def _load_one(path: Path) -> LoadResult:
    result = load_paths([path])
    assert result.errors == [], result.errors
    assert len(result.documents) == 1
    return result


@pytest.mark.parametrize("make", [make_pptx, make_odp], ids=["pptx", "odp"])
def test_slides_are_read_slide_by_slide_with_notes_tables_and_groups(
    tmp_path: Path, make: Callable[[Path, list[SlideSpec]], Path]
) -> None:
    path = make(tmp_path / f"deck.{make.__name__.removeprefix('make_')}", DECK)

    [document] = _load_one(path).documents

    assert document.type == "slides"
    text = document.text
    assert [(s.kind, s.label, s.title) for s in document.sections] == [
        ("slide", "1", "Opening"),
        ("slide", "2", "Middle"),
        ("slide", "3", "Closing"),
    ]
    first, second, third = (text[s.start : s.end] for s in document.sections)
    assert first == "## Slide 1: Opening\nWelcome to the review\nNotes: the notes-only phrase"
    assert second.startswith("## Slide 2 (hidden): Middle\nthe slide-two phrase\na second box\n")
    assert "Region\tSales\nthe table-only phrase\t40" in second
    assert "a grouped phrase\nits neighbour" in second
    assert third.endswith("Notes: first note line\nNotes: second note line")
    assert text.count("the slide-two phrase") == text.count("the table-only phrase") == 1
    assert text.count("the notes-only phrase") == 1


def test_odt_keeps_headings_lists_and_tables(tmp_path: Path) -> None:
    path = make_odt(
        tmp_path / "minutes.odt",
        "Board minutes",
        ["The board met on Monday.", "Budget approved."],
        items=["hire an analyst", "renew the lease"],
        table=[["Item", "Cost"], ["the table-only phrase", "900"]],
    )

    [document] = _load_one(path).documents

    assert document.type == "odt"
    assert document.text == (
        "# Board minutes\nThe board met on Monday.\nBudget approved.\n"
        "- hire an analyst\n- renew the lease\nItem\tCost\nthe table-only phrase\t900"
    )


def test_epub_chapters_come_in_reading_order_named_by_the_table_of_contents(
    tmp_path: Path,
) -> None:
    path = make_epub(tmp_path / "novel.epub", CHAPTERS)

    [document] = _load_one(path).documents

    assert document.type == "epub"
    assert [(s.kind, s.label) for s in document.sections] == [
        ("chapter", "Prologue"),
        ("chapter", "The Middle"),
        ("chapter", "Epilogue"),
    ]
    parts = [document.text[s.start : s.end] for s in document.sections]
    assert parts[0] == "Prologue\n\nIt was a quiet morning.\n\nNobody came."
    assert parts[-1] == "Epilogue\n\nthe last-chapter phrase"
    assert document.text.count("the last-chapter phrase") == 1


def test_rtf_gives_its_paragraphs(tmp_path: Path) -> None:
    path = make_rtf(tmp_path / "letter.rtf", ["Dear Sir,", "the rich-text phrase", "Regards"])

    [document] = _load_one(path).documents

    assert document.type == "rtf"
    assert document.text == "Dear Sir,\nthe rich-text phrase\nRegards"


def _samples(folder: Path) -> dict[str, Path]:
    folder.mkdir(exist_ok=True)
    return {
        "pptx": make_pptx(folder / "sample.pptx", DECK),
        "odp": make_odp(folder / "sample.odp", DECK),
        "odt": make_odt(folder / "sample.odt", "Heading", ["Text."]),
        "epub": make_epub(folder / "sample.epub", CHAPTERS),
        "rtf": make_rtf(folder / "sample.rtf", ["Text."]),
    }


def _errors_and_good(result: LoadResult, good: Path) -> dict[Path, str]:
    assert [d.path for d in result.documents] == [good]
    for error in result.errors:
        assert "\n" not in error.message
        assert "Traceback" not in error.message
        assert "please report" not in error.message  # a known case, not an unexpected error
    return {error.path: error.message for error in result.errors}


def test_damaged_files_are_one_line_each_and_the_others_load(tmp_path: Path) -> None:
    samples = _samples(tmp_path / "whole")
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    bad: list[Path] = []
    for name, sample in samples.items():
        noise = damaged / f"noise.{name}"
        noise.write_bytes(os.urandom(5000))
        bad.append(noise)
        if name != "rtf":  # an RTF file cut short is still RTF: its first half loads
            cut = damaged / f"cut.{name}"
            cut.write_bytes(sample.read_bytes()[: sample.stat().st_size // 2])
            bad.append(cut)
    good = damaged / "good.txt"
    good.write_text(GOOD_TEXT, encoding="utf-8")

    messages = _errors_and_good(load_paths([*bad, good]), good)

    assert set(messages) == set(bad)
    resave = {
        "pptx": "save it again as .pptx",
        "odp": "save it again as .odp",
        "odt": "save it again as .odt",
        "epub": "save it again as .epub",
        "rtf": "save it again as .rtf",
    }
    for path, message in messages.items():
        suffix = path.suffix.lstrip(".")
        if path.name.startswith("cut."):
            assert message.startswith(f"damaged .{suffix} file ("), message
            assert message.endswith(resave[suffix]), message
        elif suffix in ("pptx", "odp"):  # noise: nothing in it says which of the two it is
            assert message == (
                "not a presentation (not a ZIP package); open it in PowerPoint or LibreOffice "
                "and save it again as .pptx or .odp"
            )
        else:
            assert message.startswith(f"not a{'n' if suffix == 'rtf' else ''} "), message
            assert message.endswith(resave[suffix]), message


def test_an_encrypted_office_file_is_said_to_be_password_protected(tmp_path: Path) -> None:
    locked = tmp_path / "locked.pptx"  # Office encrypts into an OLE compound file
    locked.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + os.urandom(4000))

    [error] = load_paths([locked]).errors

    assert error.message.startswith("encrypted (password-protected) or old-format .pptx file")


BOMBED_PARTS = {
    "pptx": "ppt/slides/slide1.xml",
    "odp": "content.xml",
    "odt": "content.xml",
    "epub": "EPUB/chapter1.xhtml",
}


def test_zip_bombs_are_refused_before_they_inflate(tmp_path: Path, isolated_home: Path) -> None:
    """Each file is a few megabytes whose one part inflates to a gigabyte."""
    samples = _samples(tmp_path)
    bombs = [
        make_zip_bomb(samples[name], tmp_path / f"bomb.{name}", part)
        for name, part in BOMBED_PARTS.items()
    ]
    after = make_pptx(tmp_path / "after.pptx", DECK[:1])

    measured = bounded_load(isolated_home, *bombs, after)

    assert measured["documents"] == ["after.pptx"]
    assert [path for path, _ in measured["errors"]] == [str(bomb) for bomb in bombs]
    for _, message in measured["errors"]:
        assert message.startswith("its parts inflate to 1.0 GB (a zip bomb?)"), message
        assert f"the {LIMIT_MB}.0 MB of memory reading may use" in message


ATTACKED = [
    ("pptx", "ppt/slides/slide2.xml", "the slide-two phrase"),
    ("odp", "content.xml", "the slide-two phrase"),
    ("odt", "content.xml", "Text."),
    ("epub", "EPUB/chapter3.xhtml", "the last-chapter phrase"),
]


@pytest.mark.parametrize(
    "declaration", [BILLION_LAUGHS, EXTERNAL_ENTITY], ids=["billion-laughs", "xxe"]
)
def test_xml_entities_are_refused_never_expanded(tmp_path: Path, declaration: bytes) -> None:
    samples = _samples(tmp_path)
    attacks = [
        make_entity_attack(samples[name], tmp_path / f"attack.{name}", part, phrase, declaration)
        for name, part, phrase in ATTACKED
    ]
    good = tmp_path / "good.txt"
    good.write_text(GOOD_TEXT, encoding="utf-8")

    result = load_paths([*attacks, good])

    messages = _errors_and_good(result, good)
    assert set(messages) == set(attacks)
    for message in messages.values():
        assert message.startswith("its XML declares entities"), message
    for document in result.documents:
        assert "lollol" not in document.text
        assert "root:" not in document.text
