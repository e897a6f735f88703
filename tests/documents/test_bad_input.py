"""Bad input gives one clear line per file; the other files still load; nothing raises."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from rlm_desktop.documents import LoadOptions, load_paths
from tests.cli import is_root, run_python, unprivileged
from tests.documents.makers import make_docx, make_pdf

NO_OCR = LoadOptions(ocr=False)
GOOD_TEXT = "The good file still loads.\n"


def _only_error(path: Path, options: LoadOptions | None = None) -> str:
    result = load_paths([path], options)
    assert result.documents == []
    [error] = result.errors
    assert error.path == path
    assert "\n" not in str(error)
    return error.message


def test_corrupt_pdf_is_reported(tmp_path: Path) -> None:
    whole = make_pdf(tmp_path / "whole.pdf", [[f"line {i}" for i in range(40)]] * 3).read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(whole[: len(whole) // 2])
    assert _only_error(cut).startswith("damaged PDF")


def test_file_named_pdf_without_pdf_inside_is_reported(tmp_path: Path) -> None:
    fake = tmp_path / "fake.pdf"
    fake.write_text("just some words", encoding="utf-8")
    assert _only_error(fake).startswith("not a PDF file")


def test_encrypted_pdf_asks_for_the_password_to_be_removed(tmp_path: Path) -> None:
    locked = make_pdf(tmp_path / "locked.pdf", [["top secret"]], password="s3cret")
    message = _only_error(locked)
    assert message.startswith("password-protected PDF")
    assert "qpdf --decrypt" in message


def test_pdf_encrypted_with_an_empty_password_opens(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "restricted.pdf", [["readable anyway"]], password="")
    [document] = load_paths([pdf]).documents
    assert document.text == "readable anyway"


def test_with_ocr_off_a_scanned_pdf_asks_for_ocr(tmp_path: Path) -> None:
    scan = make_pdf(tmp_path / "scan.pdf", [[], []], scanned=[0, 1])
    message = _only_error(scan, NO_OCR)
    assert message.startswith("needs OCR: no text layer (2 pages")
    assert (
        "turn OCR on (Settings → Run defaults; on the command line, leave out --no-ocr)" in message
    )
    assert "ocrmypdf" in message


def test_a_scan_of_nothing_is_one_line_saying_ocr_found_no_text(tmp_path: Path) -> None:
    scan = make_pdf(tmp_path / "scan.pdf", [[], []], scanned=[0, 1])
    assert _only_error(scan).startswith("no text recognised: OCR found no text on its 2 pages")


def test_with_ocr_off_a_scanned_pdf_in_a_folder_is_skipped_as_needing_ocr(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "letter.txt").write_text(GOOD_TEXT, encoding="utf-8")
    make_pdf(folder / "scan.pdf", [[]], scanned=[0])
    result = load_paths([folder], NO_OCR)
    assert [d.name for d in result.documents] == ["inbox/letter.txt"]
    [skipped] = result.skipped
    assert skipped.path == folder / "scan.pdf"
    assert skipped.reason.startswith("needs OCR: no text layer (1 page")


def test_with_ocr_off_a_partly_scanned_pdf_loads_and_names_the_pages_that_need_ocr(
    tmp_path: Path,
) -> None:
    pdf = make_pdf(
        tmp_path / "mixed.pdf", [["Typed cover page"], [], [], ["Typed end"]], scanned=[1]
    )
    [document] = load_paths([pdf], NO_OCR).documents
    assert document.text.split("\f") == ["Typed cover page", "", "", "Typed end"]
    assert document.notes == (
        "needs OCR: no text layer on page 2 (scanned images); turn OCR on (Settings → Run "
        "defaults; on the command line, leave out --no-ocr), or run OCR first (e.g. `ocrmypdf "
        "in.pdf out.pdf`) to read them",
    )


def test_corrupt_docx_is_reported(tmp_path: Path) -> None:
    broken = tmp_path / "broken.docx"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("word/document.xml", "<not-a-docx/>")
    assert _only_error(broken).startswith("damaged .docx file")


def test_truncated_docx_is_reported(tmp_path: Path) -> None:
    whole = make_docx(tmp_path / "whole.docx", "Title", ["text"]).read_bytes()
    cut = tmp_path / "cut.docx"
    cut.write_bytes(whole[: len(whole) // 2])
    assert _only_error(cut).startswith("damaged .docx file")


def test_encrypted_docx_is_reported(tmp_path: Path) -> None:
    # Word stores password-protected files in an OLE compound container, not a ZIP package.
    locked = tmp_path / "locked.docx"
    locked.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504)
    assert _only_error(locked).startswith("encrypted (password-protected) or old-format .docx file")


def test_latin1_text_is_decoded(tmp_path: Path) -> None:
    text = (
        "Le café du marché a ouvert à Noël. Déjà vu: la façade rénovée, "
        "une crème brûlée et un garçon très gâté.\n"
    ) * 3
    path = tmp_path / "notes-fr.txt"
    path.write_bytes(text.encode("latin-1"))
    [document] = load_paths([path]).documents
    assert document.text == text
    assert document.encoding in {"cp1252", "latin-1", "iso8859-1", "iso8859-15"}
    assert document.notes == ()


def test_undecodable_bytes_cost_only_themselves(tmp_path: Path) -> None:
    good = "naïve café — résumé\n" * 50
    path = tmp_path / "mixed.log"
    path.write_bytes(good.encode() + b"bad \xff\xfe bytes\n" + good.encode())
    [document] = load_paths([path]).documents
    assert document.text == good + "bad \ufffd\ufffd bytes\n" + good
    assert document.encoding == "utf-8"
    assert document.notes == ("2 undecodable byte sequence(s) in utf-8 replaced with \ufffd",)


def test_legacy_bytes_deep_in_a_big_ascii_file_are_judged_where_they_are(tmp_path: Path) -> None:
    head = "2025-03-14 INFO plain ascii line\r\n" * 80_000  # well over the 1 MB detection window
    tail = (
        "Le café du marché a ouvert à Noël. Déjà vu: la façade rénovée, une crème brûlée "
        "et un garçon très gâté.\r\n"
    ) * 3
    path = tmp_path / "long.log"
    path.write_bytes((head + tail).encode("cp1252"))
    [document] = load_paths([path]).documents
    assert document.text == (head + tail).replace("\r\n", "\n")
    assert document.encoding == "cp1252"
    assert document.size == len(head) + len(tail)


def test_unrecognised_legacy_encoding_keeps_the_text_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "pl.txt"
    original = "Zażółć gęślą jaźń. Łódź jest pięknym miastem, a Kraków też.\n" * 3
    path.write_bytes(original.encode("cp1250"))  # too little text for charset-normalizer
    [document] = load_paths([path]).documents
    assert document.chars == len(original)
    assert document.text.count(" jest ") == 3
    assert document.text.count(" miastem, a Krak") == 3
    assert document.notes[0].startswith("encoding not recognised; read as cp1252")


def test_control_characters_mean_binary(tmp_path: Path) -> None:
    path = tmp_path / "dump.out"
    path.write_bytes(bytes(range(1, 32)) * 40)
    assert _only_error(path).startswith("binary content")


def test_utf16_with_bom_is_text_not_binary(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes("name,city\r\nÅsa,Malmö\r\n".encode("utf-16"))
    [document] = load_paths([path]).documents
    assert document.text == "name,city\nÅsa,Malmö\n"


def test_empty_named_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.touch()
    assert _only_error(path) == "empty file (0 bytes); check that it is the file you meant"


def test_whitespace_only_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "blank.md"
    path.write_text("  \n\n\t\n", encoding="utf-8")
    assert _only_error(path).startswith("no text in it")


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    assert _only_error(tmp_path / "nope.txt") == "no such file or folder; check the path"


def test_binary_content_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "mystery.dat2"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + os.urandom(200))
    assert _only_error(path).startswith("binary content")


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("photo.gif", "image file (.gif), not a text document"),
        ("deck.ppt", "save it as .pptx or export it to PDF"),
        ("mail.pst", "export the messages to an .mbox file"),
        ("bundle.zip", "extract it and load the folder"),
        ("figures.numbers", "export each sheet to CSV"),
        ("old.doc", "save it as .docx or PDF"),
    ],
)
def test_known_binary_and_unsupported_types_are_refused(
    tmp_path: Path, name: str, hint: str
) -> None:
    path = tmp_path / name
    path.write_bytes(b"PK\x03\x04 whatever")
    assert hint in _only_error(path)


def test_special_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    assert _only_error(fifo).startswith("not a regular file")


ONLY_ERROR = """
import sys
from pathlib import Path
from tests.documents.test_bad_input import _only_error
print(_only_error(Path(sys.argv[1])))
"""


def test_unreadable_file_is_an_error(tmp_path: Path, isolated_home: Path) -> None:
    path = tmp_path / "private.txt"
    path.write_text("secret", encoding="utf-8")
    path.chmod(0)
    if is_root():  # root reads anything: load it in a process that has lost that power
        done = run_python("-c", ONLY_ERROR, str(path), home=isolated_home, **unprivileged())
        assert done.returncode == 0, done.stderr
        message = done.stdout.strip()
    else:
        message = _only_error(path)
    assert message.startswith("cannot read it")


def test_per_file_size_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("x" * 2000, encoding="utf-8")
    message = _only_error(big, LoadOptions(max_file_bytes=1024))
    assert message == (
        "too large (2.0 KB, the per-file limit is 1.0 KB); raise the limit or split the file"
    )
    folder_result = load_paths([tmp_path], LoadOptions(max_file_bytes=1024))
    assert folder_result.skipped[0].reason.startswith("too large")


def test_total_size_limit_keeps_the_first_files(tmp_path: Path) -> None:
    paths = []
    for name in ("one.txt", "two.txt", "three.txt"):
        paths.append(tmp_path / name)
        paths[-1].write_text(name * 20, encoding="utf-8")
    result = load_paths(paths, LoadOptions(max_total_bytes=300))
    assert [d.name for d in result.documents] == ["one.txt", "two.txt"]
    [error] = result.errors
    assert error.path == paths[2]
    assert error.message.startswith("over the total size limit (300 B for all documents")


def test_options_reject_nonsense_limits() -> None:
    with pytest.raises(ValueError, match="size limits must be positive"):
        LoadOptions(max_file_bytes=0)


def test_every_bad_file_gets_one_line_and_the_good_one_loads(tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text(GOOD_TEXT, encoding="utf-8")
    (tmp_path / "empty.txt").touch()
    (tmp_path / "fake.pdf").write_text("not a pdf", encoding="utf-8")
    (tmp_path / "bad.docx").write_bytes(b"PK\x03\x04broken")
    make_pdf(tmp_path / "locked.pdf", [["x"]], password="pw")
    bad = [tmp_path / n for n in ("empty.txt", "fake.pdf", "missing.md", "bad.docx", "locked.pdf")]
    result = load_paths([bad[0], bad[1], good, *bad[2:]])
    assert [d.text for d in result.documents] == [GOOD_TEXT]
    assert [e.path for e in result.errors] == bad
    assert all("\n" not in str(e) and "Traceback" not in str(e) for e in result.errors)
