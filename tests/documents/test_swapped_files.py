"""A file is read as its size check saw it: one descriptor for the check and the read.

`LoadOptions.on_file` runs after a file was checked and just before it is read: here it swaps
the file for a bigger one (by rename, as an editor saves or an attacker races) or makes it grow
(as a log does). The loader once checked the size by path and then read the path again, whole:
a file swapped in between was read however big it was (750 M characters past a 256 MiB limit).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from rlm_desktop.documents import LoadOptions, load_paths
from tests.documents.makers import make_docx, make_pdf

ORIGINAL = "Zebrafish: 7 in tank A.\n"
SWAPPED = "SWAPPED: 9,000 zebrafish in tank B.\n"
GROWTH = SWAPPED * 20_000  # ~700 KB


def _text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _csv(path: Path, text: str) -> Path:
    path.write_text("tank,fish\n" + "".join(f"A,{line}" for line in text.splitlines(True)))
    return path


def _pdf(path: Path, text: str) -> Path:
    lines = text.splitlines()
    return make_pdf(path, [lines[i : i + 40] for i in range(0, len(lines), 40)])


def _docx(path: Path, text: str) -> Path:
    return make_docx(path, "Tanks", text.splitlines())


MAKERS: dict[str, Callable[[Path, str], Path]] = {
    "notes.txt": _text,
    "tanks.csv": _csv,
    "page.html": lambda path, text: _text(path, f"<html><body><p>{text}</p></body></html>"),
    "tanks.json": lambda path, text: _text(path, f'{{"text": "{text.strip()}"}}'),
    "report.pdf": _pdf,
    "report.docx": _docx,
}


def _checked_then(path: Path, action: Callable[[], None]) -> Callable[[Path], None]:
    """An `on_file` hook that runs `action` once, when `path` is about to be read."""

    def hook(seen: Path) -> None:
        if seen == path:
            action()

    return hook


@pytest.mark.parametrize("name", list(MAKERS))
def test_a_file_replaced_after_its_check_is_read_as_it_was_checked(
    tmp_path: Path, name: str
) -> None:
    make = MAKERS[name]
    folder = tmp_path / "docs"
    folder.mkdir()
    path = make(folder / name, ORIGINAL)
    checked = path.stat().st_size
    bigger = make(tmp_path / f"bigger-{name}", ORIGINAL + SWAPPED * 400)
    assert bigger.stat().st_size > checked
    expected = load_paths([path]).documents[0].text

    swap = _checked_then(path, lambda: os.replace(bigger, path))
    result = load_paths([path], LoadOptions(max_file_bytes=checked, on_file=swap))

    assert result.errors == []
    (document,) = result.documents
    assert "SWAPPED" not in document.text
    assert document.text == expected
    assert document.size == checked
    assert path.stat().st_size > checked  # it was swapped: the loader read what it had checked


@pytest.mark.parametrize("name", ["notes.txt", "tanks.csv"])
def test_a_text_file_that_grows_after_its_check_is_cut_at_the_checked_size(
    tmp_path: Path, name: str
) -> None:
    path = MAKERS[name](tmp_path / name, ORIGINAL)
    checked = path.stat().st_size
    expected = load_paths([path]).documents[0].text

    def grow() -> None:
        with path.open("a", encoding="utf-8") as file:
            file.write(GROWTH)

    result = load_paths(
        [path], LoadOptions(max_file_bytes=checked, on_file=_checked_then(path, grow))
    )

    (document,) = result.documents
    assert document.text == expected
    assert document.size == checked
    assert document.notes == (
        f"the file grew while it was being read: its first {checked:,} bytes, as checked, "
        "were loaded",
    )


@pytest.mark.parametrize("name", ["report.pdf", "report.docx"])
def test_a_pdf_or_word_file_that_grows_after_its_check_is_refused(
    tmp_path: Path, name: str
) -> None:
    path = MAKERS[name](tmp_path / name, ORIGINAL)
    checked = path.stat().st_size

    def grow() -> None:
        with path.open("ab") as file:
            file.write(GROWTH.encode() * 2)

    result = load_paths([path], LoadOptions(on_file=_checked_then(path, grow)))

    assert result.documents == []
    (error,) = result.errors
    assert error.message == (
        f"it changed while it was being read (it grew past the {checked:,} bytes it had when "
        "checked); load it again once it is complete"
    )


def test_a_fifo_swapped_in_after_the_folder_was_listed_is_refused_without_waiting(
    tmp_path: Path,
) -> None:
    """Opening comes before the check now: a pipe in a file's place must not block the load."""
    folder = tmp_path / "docs"
    folder.mkdir()
    first, second = _text(folder / "a.txt", ORIGINAL), _text(folder / "b.txt", ORIGINAL)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    result = load_paths(
        [folder], LoadOptions(on_file=_checked_then(first, lambda: os.replace(fifo, second)))
    )

    assert [d.path for d in result.documents] == [first]
    (skipped,) = result.skipped
    assert skipped.path == second
    assert skipped.reason == "not a regular file (a device, pipe or socket)"
