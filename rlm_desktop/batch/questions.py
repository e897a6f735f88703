"""A batch's questions file: CSV with a header row, or JSONL, one question a row.

    question,documents,id,model
    "Who are the parties?",contracts/acme,acme,
    "When does it end?",contracts/globex/*.pdf;contracts/globex/annex.docx,,openai/gpt-5

    {"question": "Who are the parties?", "documents": "contracts/acme", "id": "acme"}
    {"question": "When does it end?", "documents": ["contracts/globex/*.pdf"], "mode": "direct"}

`question` is required; `documents` names a file, a folder or a glob inside the questions
file's folder (relative paths are relative to it; in CSV several are separated by `;`, in JSONL
a list): a questions file is often someone else's, so whatever a path, a glob or a link leads to
outside that folder is refused, as a task file's documents are;
`id` is the row's id (default: its number, from 1); the setting keys of an evaluation
(`model`, `sub_model`, `mode`, `depth`, `profile`, `max_turns`, `auto_max_tokens`, `sandbox`)
override the batch's default setting for that row. Every path is checked when the file is read;
documents are loaded only when the row runs. Every problem is a `ConfigError` naming `FILE:LINE`.
"""

from __future__ import annotations

import csv
import dataclasses
import glob
import hashlib
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop import confined
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.evaluation.settings import KEYS, Setting, parse_setting

ROW_KEYS = ("question", "documents", "id")
"""The keys of a row besides its setting's."""
SETTING_KEYS = (
    "model", "sub_model", "mode", "depth", "profile", "max_turns", "auto_max_tokens", "sandbox",
)  # fmt: skip
"""The setting keys as the messages name them (`KEYS` also takes `sub-model`, `max_depth`)."""
KNOWN = f"{', '.join(ROW_KEYS)} and the setting keys {', '.join(SETTING_KEYS)}"
JSONL_SUFFIXES = (".jsonl", ".ndjson")
SEPARATOR = ";"
"""Between a CSV row's documents."""
GLOB_CHARACTERS = frozenset("*?[")


@dataclass(frozen=True)
class QuestionRow:
    """One question of a batch: what to ask, of which documents, under which setting."""

    row_id: str
    line: int
    """The line of the questions file the row starts on (from 1)."""
    question: str
    documents: tuple[str, ...]
    """The documents as the file names them."""
    paths: tuple[Path, ...]
    """What they name, globs expanded: absolute paths of files and folders, each there when the
    file was read."""
    setting: Setting
    """The batch's default setting, the row's own keys over it."""


def digest(path: Path) -> str:
    """The SHA-256 of the file (a resume checks the questions are the ones it started with)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_questions(path: Path, default: Setting, shown: str | None = None) -> list[QuestionRow]:
    """The rows of the questions file at `path` (named `shown` in messages, else its path),
    each under `default` with its own setting keys over it; `ConfigError` names the first bad
    line and what to write instead."""
    name = shown or str(path)
    if not path.is_file():
        raise ConfigError(
            f"{name} is not a file: give a CSV (with a header row) or JSONL file of questions",
            "questions",
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{name}:1: cannot be read as UTF-8 text ({error})") from error
    if not text.strip():
        raise ConfigError(
            f"{name}:1: the file is empty: write a header row (question,documents) and one row "
            "per question, or one JSON object per line"
        )
    parser = _Parser(name, path.resolve().parent, default)
    jsonl = path.suffix.lower() in JSONL_SUFFIXES or (
        path.suffix.lower() != ".csv" and text.lstrip().startswith("{")
    )
    rows = parser.jsonl(text) if jsonl else parser.csv(text)
    if not rows:
        raise ConfigError(f"{name}:1: no questions: add one row per question under the header")
    return rows


class _Parser:
    """Reads one questions file's rows, remembering their ids to refuse a repeat."""

    def __init__(self, name: str, folder: Path, default: Setting) -> None:
        self.name = name
        self.folder = folder
        self.default = default
        self._ids: dict[str, int] = {}

    def fail(self, line: int, problem: str) -> ConfigError:
        """The error of `line`: `FILE:LINE: problem`."""
        return ConfigError(f"{self.name}:{line}: {problem}")

    def csv(self, text: str) -> list[QuestionRow]:
        """The rows of a CSV file, its first non-blank row the header."""
        reader = csv.reader(io.StringIO(text, newline=""))
        header: list[str] = []
        header_line = 0
        rows: list[QuestionRow] = []
        try:
            while True:
                line = reader.line_num + 1
                cells = next(reader, None)
                if cells is None:
                    break
                if not any(cell.strip() for cell in cells):
                    continue
                if not header:
                    header, header_line = self._header(line, cells), line
                    continue
                if len(cells) > len(header):
                    raise self.fail(
                        line,
                        f"{len(cells)} cells but the header has {len(header)} columns: put a "
                        'cell that holds a comma in double quotes ("a, b")',
                    )
                values = {key: cell.strip() for key, cell in zip(header, cells, strict=False)}
                documents = [d.strip() for d in values.pop("documents", "").split(SEPARATOR)]
                rows.append(self._row(line, len(rows) + 1, values, documents))
        except csv.Error as error:
            raise self.fail(reader.line_num, f"not CSV ({error})") from error
        if not rows and header_line:
            raise self.fail(header_line, "no questions: add one row per question under the header")
        return rows

    def _header(self, line: int, cells: list[str]) -> list[str]:
        names = [cell.strip().lower() for cell in cells]
        for position, name in enumerate(names):
            if name not in ROW_KEYS and name not in KEYS:
                raise self.fail(line, f"unknown column {name!r}: the columns are {KNOWN}")
            if name in names[:position]:
                raise self.fail(line, f"column {name!r} is given twice: keep one")
        for needed in ("question", "documents"):
            if needed not in names:
                raise self.fail(
                    line,
                    f"no {needed} column: the header row needs question and documents "
                    f"(the columns are {KNOWN})",
                )
        return names

    def jsonl(self, text: str) -> list[QuestionRow]:
        """The rows of a JSONL file, one object a non-blank line."""
        rows: list[QuestionRow] = []
        for line, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                entry = json.loads(raw)
            except json.JSONDecodeError as error:
                raise self.fail(
                    line, f"not JSON ({error.msg}): write one JSON object per line"
                ) from error
            if not isinstance(entry, dict):
                raise self.fail(
                    line, 'not a JSON object: write {"question": "...", "documents": "..."}'
                )
            values, documents = self._entry(line, entry)
            rows.append(self._row(line, len(rows) + 1, values, documents))
        return rows

    def _entry(self, line: int, entry: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
        """A JSON row's values as text, and its documents."""
        values: dict[str, str] = {}
        for key, value in entry.items():
            if key == "documents":
                continue
            if key not in ROW_KEYS and key not in KEYS:
                raise self.fail(line, f"unknown key {key!r}: the keys are {KNOWN}")
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise self.fail(line, f"{key!r} must be a text or a number, not {value!r}")
            values[key] = str(value).strip()
        if "question" not in entry:
            raise self.fail(line, 'no "question": write {"question": "...", "documents": "..."}')
        raw = entry.get("documents", [])
        documents = [raw] if isinstance(raw, str) else raw
        if not isinstance(documents, list) or not all(isinstance(d, str) for d in documents):
            raise self.fail(
                line, '"documents" must be a path or a list of paths, e.g. ["contracts/acme"]'
            )
        return values, [d.strip() for d in documents]

    def _row(
        self, line: int, number: int, values: dict[str, str], documents: list[str]
    ) -> QuestionRow:
        question = values.pop("question", "")
        if not question:
            raise self.fail(line, "the question is empty: write the question to ask")
        row_id = values.pop("id", "") or str(number)
        if row_id in self._ids:
            raise self.fail(
                line,
                f"row id {row_id!r} is also the id of line {self._ids[row_id]}: give every row "
                "its own id",
            )
        self._ids[row_id] = line
        named = tuple(d for d in documents if d)
        if not named:
            raise self.fail(
                line, f"no documents: name a file, a folder or a glob (relative to {self.folder})"
            )
        paths = tuple(path for document in named for path in self._paths(line, document))
        return QuestionRow(row_id, line, question, named, paths, self._setting(line, values))

    def _paths(self, line: int, document: str) -> list[Path]:
        """What `document` names, each path there now and inside the file's folder; a glob
        matches at least one."""
        path = Path(document).expanduser()
        path = path if path.is_absolute() else self.folder / path
        if path.exists():
            return [self._inside(line, document, path)]
        if GLOB_CHARACTERS.isdisjoint(document):
            raise self.fail(
                line,
                f"{document!r} does not exist ({path}): name a file, a folder or a glob "
                f"(relative to {self.folder})",
            )
        matched = sorted(glob.glob(str(path), recursive=True))
        if not matched:
            raise self.fail(
                line, f"{document!r} matches nothing ({path}): check the pattern and the folder"
            )
        return [self._inside(line, document, Path(found)) for found in matched]

    def _inside(self, line: int, document: str, path: Path) -> Path:
        """`path` (what `document` names), links followed, when it is inside the file's folder:
        a questions file is often someone else's, and a path out of its folder could send any
        file the user can read to a provider."""
        written = Path(document).expanduser().is_absolute()
        named = path if written else os.path.relpath(path, self.folder)
        try:
            return confined.inside(self.folder, named)
        except confined.OutsideFolder as outside:
            raise self.fail(
                line,
                f"document {document!r} {outside.how} the questions file's folder "
                f"({self.folder}); documents must be inside it (copy or move them there)",
            ) from None

    def _setting(self, line: int, values: dict[str, str]) -> Setting:
        """The default setting with the row's setting keys over it (empty cells left out)."""
        chosen: dict[str, Any] = {}
        for key, value in values.items():
            if not value:
                continue
            try:
                parsed = parse_setting(f"{key}={value}")
            except ConfigError as error:
                raise self.fail(line, error.problem.rpartition(": ")[2]) from None
            field = KEYS[key]
            chosen[field] = getattr(parsed, field)
        return dataclasses.replace(self.default, **chosen) if chosen else self.default
