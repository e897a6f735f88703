"""OCR of images and of scanned PDF pages: recognised on this CPU, marked as recognised.

Every image and scan is drawn here from text (DejaVu Sans); every load goes through `load_paths`
and its bounded reader process at the default memory bound, where the OCR engine must fit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlm_desktop.documents import LoadOptions, load_paths
from rlm_desktop.documents.model import Document, LoadResult
from rlm_desktop.documents.ocr import OCR_OFF, TURN_ON
from rlm_desktop.documents.ocr_engine import _Box, group_lines
from tests.cli import ROOT, run_python
from tests.documents.makers import make_pdf
from tests.documents.ocr_makers import (
    huge_png,
    logo_image,
    make_image,
    make_mixed_pdf,
    make_scanned_pdf,
    make_tiff,
    png_header,
    text_lines,
)

PNG_LINES = ["Invoice 4471 for the northern region", "total due within thirty days"]
JPG_LINES = ["Quarterly revenue rose by twelve percent", "costs fell after the review"]
TIFF_PAGES = [["first page of the signed contract"], ["second page with the shipping terms"]]
SCAN_LINES = ["The scanned letter from our supplier", "confirms the new shipping contract"]
TYPED = ["Typed cover page", "Revenue rose (strongly)."]
MARKER = "[text recognised by OCR, confidence "
LONG_SCAN = [[f"page {n} of the long scanned contract"] for n in range(1, 13)]
ALL_LINES = [*PNG_LINES, *JPG_LINES, *SCAN_LINES, *(line for page in TIFF_PAGES for line in page)]


def _words(lines: list[str] | list[list[str]]) -> set[str]:
    flat = [line for item in lines for line in ([item] if isinstance(item, str) else item)]
    return {word.lower() for line in flat for word in line.split()}


def _found(document: Document) -> set[str]:
    """The expected words that OCR read, with or without the spaces between them (PP-OCR's
    models, trained mostly on Chinese, sometimes drop the space between English words)."""
    squashed = "".join(document.text.lower().split())
    return {word for word in _words(ALL_LINES) if word in squashed}


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> LoadResult:
    """One folder of images and scans, loaded once (one reader process, one OCR engine)."""
    folder = tmp_path_factory.mktemp("ocr") / "inbox"
    folder.mkdir()
    make_image(folder / "invoice.png", PNG_LINES)
    make_image(folder / "photo.jpg", JPG_LINES)
    make_tiff(folder / "contract.tiff", TIFF_PAGES)
    make_scanned_pdf(folder / "letter.pdf", [SCAN_LINES])
    make_mixed_pdf(folder / "mixed.pdf", TYPED, SCAN_LINES)
    make_pdf(folder / "typed.pdf", [["A typed page only"]])
    (folder / "damaged.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00garbage" * 40)
    logo_image(folder / "logo.png")
    from PIL import Image

    Image.new("RGB", (16, 16), "black").save(folder / "icon.png")
    return load_paths([folder])


def _document(result: LoadResult, name: str) -> Document:
    [document] = [d for d in result.documents if d.name.endswith(name)]
    return document


def _skipped(result: LoadResult, name: str) -> str:
    [reason] = [s.reason for s in result.skipped if s.path.name == name]
    return reason


@pytest.mark.parametrize(
    ("name", "lines"), [("invoice.png", PNG_LINES), ("photo.jpg", JPG_LINES)], ids=["png", "jpg"]
)
def test_an_image_is_read_by_ocr_and_marked_as_recognised(
    loaded: LoadResult, name: str, lines: list[str]
) -> None:
    document = _document(loaded, name)

    assert document.type == "image"
    assert document.text.startswith(MARKER)
    found = _found(document)
    assert len(_words(lines) & found) >= 0.8 * len(_words(lines)), document.text
    [section] = document.sections
    assert (section.kind, section.label) == ("page", "1")
    assert section.ocr_confidence is not None
    assert 0.8 < section.ocr_confidence <= 1
    assert document.text.startswith(f"{MARKER}{section.ocr_confidence:.2f}]\n")
    [note] = document.notes
    assert note.startswith("text recognised by OCR (confidence ")
    assert section.meta()["ocr_confidence"] == round(section.ocr_confidence, 3)


def test_each_frame_of_a_tiff_is_a_page(loaded: LoadResult) -> None:
    document = _document(loaded, "contract.tiff")

    assert document.pages == 2
    assert [s.label for s in document.sections] == ["1", "2"]
    for section, lines in zip(document.sections, TIFF_PAGES, strict=True):
        page = document.text[section.start : section.end]
        assert page.startswith(MARKER)
        assert "contract" in page or "shipping" in page
        squashed = "".join(page.lower().split())
        assert sum(word in squashed for word in _words(lines)) >= 0.7 * len(_words(lines))
    assert document.notes[0].startswith("text recognised by OCR on 2 pages (mean confidence ")


def test_an_image_only_pdf_now_loads(loaded: LoadResult) -> None:
    document = _document(loaded, "letter.pdf")

    assert document.type == "pdf"
    assert document.text.startswith(MARKER)
    assert len(_words(SCAN_LINES) & _found(document)) >= 0.8 * len(_words(SCAN_LINES))
    [section] = document.sections
    assert section.ocr_confidence is not None
    assert 0 < section.ocr_confidence <= 1
    assert document.notes[0].startswith("text recognised by OCR on 1 page (mean confidence ")


def test_a_mixed_pdf_keeps_its_typed_page_and_reads_its_scanned_one(loaded: LoadResult) -> None:
    document = _document(loaded, "mixed.pdf")

    typed, scanned = document.text.split("\f")
    assert typed == "\n".join(TYPED)  # untouched
    assert scanned.startswith(MARKER)
    assert "supplier" in scanned.lower()
    first, second = document.sections
    assert first.ocr_confidence is None
    assert document.text[first.start : first.end] == typed
    assert second.ocr_confidence is not None
    assert 0 < second.ocr_confidence <= 1
    assert document.text[second.start : second.end] == scanned
    assert not any("needs OCR" in note for note in document.notes)


def test_a_typed_pdf_is_not_touched_by_ocr(loaded: LoadResult) -> None:
    document = _document(loaded, "typed.pdf")
    assert document.text == "A typed page only"
    assert document.notes == ()
    assert document.sections[0].ocr_confidence is None


def test_images_without_text_are_skipped_and_a_damaged_one_is_one_line(
    loaded: LoadResult,
) -> None:
    assert _skipped(loaded, "logo.png").startswith("no text recognised in this image")
    assert _skipped(loaded, "icon.png").startswith("too small to hold readable text (16 x 16")
    damaged = _skipped(loaded, "damaged.png")
    assert damaged.startswith("damaged or unsupported image")
    assert "\n" not in damaged
    assert {d.name.split("/")[-1] for d in loaded.documents} == {
        "invoice.png", "photo.jpg", "contract.tiff", "letter.pdf", "mixed.pdf", "typed.pdf",
    }  # fmt: skip


def test_with_ocr_off_images_are_refused_and_scans_need_ocr(tmp_path: Path) -> None:
    image = make_image(tmp_path / "invoice.png", PNG_LINES)
    scan = make_scanned_pdf(tmp_path / "letter.pdf", [SCAN_LINES])
    mixed = make_mixed_pdf(tmp_path / "mixed.pdf", TYPED, SCAN_LINES)

    result = load_paths([image, scan, mixed], LoadOptions(ocr=False))

    image_error, scan_error = result.errors
    assert image_error.message == OCR_OFF
    assert scan_error.message.startswith("needs OCR: no text layer (1 page")
    assert TURN_ON in scan_error.message
    [document] = result.documents
    assert document.text == "\n".join(TYPED) + "\f"
    assert document.notes == (
        f"needs OCR: no text layer on page 2 (scanned images); {TURN_ON}, or run OCR first "
        "(e.g. `ocrmypdf in.pdf out.pdf`) to read them",
    )


@pytest.mark.parametrize(
    ("width", "height"), [(30_000, 30_000), (12_000, 10_000)], ids=["900MP", "120MP"]
)
def test_a_decompression_bomb_is_refused_before_it_is_decoded(
    tmp_path: Path, width: int, height: int
) -> None:
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(png_header(width, height))

    [error] = load_paths([bomb]).errors

    assert error.message.startswith("image too large to read (")
    assert "the limit is 100 megapixels" in error.message


def test_a_real_30000_pixel_square_png_is_refused_within_bounds(tmp_path: Path) -> None:
    bomb = tmp_path / "white.png"
    bomb.write_bytes(huge_png(30_000, 30_000))
    assert bomb.stat().st_size < 2_000_000  # 900 million pixels in under 2 MB

    [error] = load_paths([bomb]).errors

    assert error.message.startswith("image too large to read (900,000,000 pixels")


def test_boxes_are_read_as_lines_top_to_bottom_and_left_to_right() -> None:
    boxes = [
        _Box(52, 80, 300, "world", 0.9),
        _Box(10, 40, 200, "there", 0.9),
        _Box(50, 78, 10, "hello", 0.9),
        _Box(12, 38, 5, "over", 0.9),
        _Box(120, 150, 40, "last", 0.9),
    ]
    lines = [[box.text for box in line] for line in group_lines(boxes)]
    assert lines == [["over", "there"], ["hello", "world"], ["last"]]


NO_NETWORK = r"""
import json, sys
from pathlib import Path
events = []
def hook(event, args):
    if event.startswith(("socket.", "urllib.", "http.")):
        events.append(event)
sys.addaudithook(hook)
from rlm_desktop.documents.extract import ReadSettings, extract
extracted = extract("image", Path(sys.argv[1]).read_bytes(), ReadSettings())
print(json.dumps({"events": events, "text": extracted.text}))
"""


def test_ocr_needs_no_network_and_downloads_nothing(tmp_path: Path) -> None:
    image = make_image(tmp_path / "invoice.png", PNG_LINES)
    home = tmp_path / "home"
    home.mkdir()

    done = run_python("-c", NO_NETWORK, str(image), home=home, env={"PYTHONPATH": str(ROOT)})

    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["events"] == []
    assert "invoice" in answer["text"].lower()
    assert not any(home.rglob("*.onnx"))  # the models came from the wheel, not a download
    # onnxruntime's own telemetry (a device id and an upload queue) stays off
    assert not (home / ".cache" / "Microsoft").exists()


def test_many_text_lines_keep_their_order(tmp_path: Path) -> None:
    lines = text_lines(8, words=5)
    image = make_image(tmp_path / "list.png", lines)

    [document] = load_paths([image]).documents

    read = document.text.split("\n")[1:]
    assert len(read) == len(lines)
    matched = sum(a.split()[0] == b.split()[0] for a, b in zip(read, lines, strict=True))
    assert matched >= 7, document.text


def test_a_long_scan_may_take_longer_than_the_per_file_bound_page_by_page(
    tmp_path: Path,
) -> None:
    """Each page read says so to the reader: a 12-page scan that takes longer than the per-file
    bound in all (about 9 s here), but no page of it that long, loads whole."""
    scan = make_scanned_pdf(tmp_path / "long.pdf", LONG_SCAN)
    result = load_paths([scan], LoadOptions(max_read_seconds=5))
    assert result.errors == []
    [document] = result.documents
    assert [s.label for s in document.sections] == [str(n) for n in range(1, 13)]
    assert all(s.ocr_confidence is not None for s in document.sections)


def test_ocr_of_one_file_stops_at_its_own_bound_and_keeps_what_it_read(tmp_path: Path) -> None:
    scan = make_scanned_pdf(tmp_path / "long.pdf", LONG_SCAN)
    result = load_paths([scan], LoadOptions(max_ocr_seconds=0.5))
    [document] = result.documents
    recognised = [s.label for s in document.sections if s.ocr_confidence is not None]
    assert recognised == ["1"]  # the first page starts at once; none after the bound
    assert any("OCR stopped at its time limit: pages 2, 3, 4," in n for n in document.notes)


def test_a_page_scanned_upside_down_is_read_turned_over(tmp_path: Path) -> None:
    from tests.documents.ocr_makers import page_image

    page_image(PNG_LINES).rotate(180).save(tmp_path / "upside-down.png")
    result = load_paths([tmp_path / "upside-down.png"])
    assert result.errors == []
    [document] = result.documents
    assert "invoice 4471 for the northern region" in document.text.lower()
