"""A load says how far it is (files found, read, loaded, skipped) as it goes, and a progress
callback that raises `LoadCancelled` stops it between two files."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest

from rlm_desktop.documents import LoadOptions, load_paths
from rlm_desktop.documents.load_progress import LoadCancelled, LoadProgress
from tests.documents.makers import make_pdf


def _folder(root: Path, files: int) -> Path:
    for number in range(files):
        sub = root / f"part{number % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note{number:03d}.txt").write_text(f"note {number}\n", encoding="utf-8")
    (root / ".hidden").write_text("left out\n", encoding="utf-8")
    return root


def test_progress_counts_found_then_read_loaded_and_skipped(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "notes", 30)
    named = tmp_path / "memo.md"
    named.write_text("# Memo\n", encoding="utf-8")
    seen: list[LoadProgress] = []
    result = load_paths([folder, named], LoadOptions(on_progress=seen.append))
    listing = [p for p in seen if p.listing]
    assert listing, "nothing reported while the folders were listed"
    assert [p.found for p in listing] == sorted(p.found for p in listing)
    assert all(p.fraction is None for p in listing)  # no total yet: no share
    reading = [p for p in seen if not p.listing]
    assert reading[0].found == 31  # the total is known before the first file is read
    assert [p.read for p in reading] == sorted(p.read for p in reading)
    last = seen[-1]
    assert (last.found, last.read, last.loaded, last.skipped) == (31, 31, 31, 1)
    assert last.fraction == 1.0
    assert len(result.documents) == 31
    assert last.describe() == "31 found · 31 loaded · 1 skipped"


def test_files_that_vanish_after_the_listing_are_skipped_with_their_reason(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path / "notes", 12)
    gone = sorted(folder.rglob("note00*.txt"))  # ten of them

    def delete_once_listed(progress: LoadProgress) -> None:
        if not progress.listing and progress.read == 0:
            for path in gone:
                path.unlink(missing_ok=True)

    result = load_paths([folder], LoadOptions(on_progress=delete_once_listed))
    assert sorted(d.name for d in result.documents) == ["notes/part1/note010.txt",
                                                        "notes/part2/note011.txt"]  # fmt: skip
    reasons = {s.path: s.reason for s in result.skipped}
    for path in gone:
        assert reasons[path].startswith("cannot read it"), reasons[path]
    assert result.errors == []


def test_a_progress_callback_that_raises_load_cancelled_stops_the_load(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "notes", 60)
    make_pdf(folder / "aa.pdf", [["a PDF read by the bounded reader"]])
    seen: list[LoadProgress] = []

    def cancel_after_five(progress: LoadProgress) -> None:
        seen.append(progress)
        if progress.read >= 5:
            raise LoadCancelled

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(LoadCancelled):
        load_paths([folder], LoadOptions(on_progress=cancel_after_five))
    assert (
        seen[-1].read == 5
    )  # stopped at once, not after the other 56 files; the PDF first started a reader
    after = {p.pid for p in psutil.Process().children(recursive=True)}
    assert after <= before  # no reader process left behind
