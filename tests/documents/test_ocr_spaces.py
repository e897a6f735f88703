"""Spaces between English words in OCR: kept where the recogniser saw them, even when its best
reading of the gap was "nothing" (PP-OCR's models, trained mostly on Chinese, often drop them)."""

from __future__ import annotations

from pathlib import Path

from rlm_desktop.documents import load_paths
from rlm_desktop.documents.ocr_read import SPACE_PROB, insert_spaces
from tests.documents.ocr_makers import make_image
from tests.documents.test_ocr import JPG_LINES, _document

HIGH, LOW = 0.2, SPACE_PROB / 10


def _space_probs(columns: int, gaps: dict[int, float]) -> list[float]:
    """A space probability for each of `columns` columns: `LOW` except at `gaps`."""
    return [gaps.get(column, LOW) for column in range(columns)]


def test_a_space_goes_where_the_model_gave_it_a_chance() -> None:
    # "revenuerose": letters every 3 columns, the gap's column (21) between "e" and "r"
    columns = [3 * n for n in range(11)]
    columns[7:] = [column + 2 for column in columns[7:]]
    space = _space_probs(40, {19: HIGH})
    assert insert_spaces("revenuerose", columns, space) == "revenue rose"


def test_no_space_inside_a_word_or_where_the_chance_is_low() -> None:
    columns = [0, 2, 4, 9, 11]  # a wide jump alone is no space
    assert insert_spaces("costs", columns, _space_probs(12, {6: SPACE_PROB})) == "costs"


def test_a_space_already_read_is_not_doubled() -> None:
    columns = [0, 2, 4, 6, 8]
    space = _space_probs(10, {4: 0.9, 3: HIGH, 5: HIGH})
    assert insert_spaces("ab cd", columns, space) == "ab cd"


def test_only_between_latin_letters_and_digits() -> None:
    columns = [0, 2, 4, 6, 8, 10]
    space = _space_probs(12, {1: HIGH, 3: HIGH, 5: HIGH, 7: HIGH, 9: HIGH})
    assert insert_spaces("a4,b中文", columns, space) == "a 4,b中文"
    assert insert_spaces("", [], []) == ""


def test_the_photo_keeps_its_spaces(tmp_path: Path) -> None:
    """Through the bounded reader at its default memory bound, as the user's files are read."""
    make_image(tmp_path / "photo.jpg", JPG_LINES)
    text = _document(load_paths([tmp_path]), "photo.jpg").text.lower()
    assert "quarterly revenue rose by twelve percent" in text
    assert "costs fell after the review" in text
