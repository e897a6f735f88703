"""The questions file as `read_questions` reads it: CSV and JSONL rows, their lines, ids,
documents (paths relative to the file, `;` lists, globs) and settings over the default."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

from rlm_desktop.batch.questions import read_questions
from rlm_desktop.evaluation.settings import parse_setting
from tests.batch.scripting import make_folders

DEFAULT = parse_setting("model=openai/good-model,mode=rlm,depth=1")


def resolved(paths: Iterable[Path]) -> list[Path]:
    return [path.resolve() for path in paths]


def test_csv_rows_keep_their_lines_ids_documents_and_settings(tmp_path: Path) -> None:
    make_folders(tmp_path)
    path = tmp_path / "questions.csv"
    path.write_text(
        "ID, Question ,documents,model,depth\n"
        ',"Who signed, and when?\nSay both.",contracts/c0 ; contracts/c1/*.txt,,\n'
        "\n"
        "x7,What is the term?,contracts/c2,openai/other-model,3\n",
        encoding="utf-8",
    )
    first, second = read_questions(path, DEFAULT)
    assert (first.row_id, first.line, first.question) == (
        "1",
        2,
        "Who signed, and when?\nSay both.",
    )
    assert first.documents == ("contracts/c0", "contracts/c1/*.txt")
    assert resolved(first.paths) == resolved([tmp_path / "contracts/c0",
                                              tmp_path / "contracts/c1/contract.txt"])  # fmt: skip
    assert first.setting == DEFAULT
    assert (second.row_id, second.line, second.documents) == ("x7", 5, ("contracts/c2",))
    assert second.setting == dataclasses.replace(DEFAULT, model="openai/other-model", depth=3)


def test_jsonl_rows_take_a_path_or_a_list(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    make_folders(folder)
    elsewhere = folder / "contracts" / "c4"
    (folder / "batch").mkdir()
    path = folder / "questions.jsonl"
    path.write_text(
        '{"question": "Who?", "documents": "contracts/c0"}\n'
        "\n"
        f'{{"id": 5, "question": "When?", "documents": ["batch/../contracts/c1", "{elsewhere}"], '
        '"mode": "direct", "sub-model": "openai/other-model"}\n',
        encoding="utf-8",
    )
    first, second = read_questions(path, DEFAULT)
    assert (first.row_id, first.line) == ("1", 1)
    assert resolved(first.paths) == resolved([folder / "contracts/c0"])
    assert (second.row_id, second.line) == ("5", 3)
    assert resolved(second.paths) == resolved([folder / "contracts/c1", elsewhere])
    assert (second.setting.mode, second.setting.sub_model) == ("direct", "openai/other-model")
    assert second.setting.model == DEFAULT.model
