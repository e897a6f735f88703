"""A user's own task set: a JSONL file, or a folder holding `tasks.jsonl`.

Each line is one task::

    {"id": "q1", "question": "...", "answer": "42", "scoring": "numeric",
     "documents": ["report.pdf", {"name": "note.txt", "text": "inline text"}]}

`scoring` is `exact` (the default), `numeric` or `f1`; `documents` are paths (relative to the
file's folder; PDF, Word, HTML, ... as the app loads them) or inline texts; `context` (one
inline text) may stand in for `documents`. `id` defaults to the line number.

Documents named by path must be inside the task file's folder, after links are followed: a task
file is often someone else's (a shared benchmark), and `../`, an absolute path or a link pointing
out could otherwise send any file the user can read to the provider. Inside a named folder, the
loader skips links that leave it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlm_desktop import confined
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.evaluation.tasks import SCORINGS, Scoring, Task, count

FILE_IN_FOLDER = "tasks.jsonl"


def tasks_file(path: Path) -> Path:
    """The JSONL file a task path names (itself, or `tasks.jsonl` inside a folder)."""
    file = path / FILE_IN_FOLDER if path.is_dir() else path
    if not file.is_file():
        where = f"{path} has no {FILE_IN_FOLDER}" if path.is_dir() else f"{path} does not exist"
        raise ConfigError(
            f"{where}: give a JSONL file of tasks or a folder holding {FILE_IN_FOLDER}"
        )
    return file


def user_tasks(path: Path) -> list[Task]:
    """The tasks of a user's task file or folder; `ConfigError` names the first bad line."""
    file = tasks_file(path)
    tasks: list[Task] = []
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{file}: cannot be read ({error})") from error
    for number, line in enumerate(lines, start=1):
        if line.strip():
            tasks.append(_task(file, number, line))
    if not tasks:
        raise ConfigError(f"{file} holds no tasks: write one JSON object a line")
    ids = [task.id for task in tasks]
    if len(set(ids)) != len(ids):
        raise ConfigError(f'{file}: task ids repeat; give every line its own "id"')
    return tasks


def _task(file: Path, number: int, line: str) -> Task:
    where = f"{file}, line {number}"
    try:
        entry = json.loads(line)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{where}: not JSON ({error.msg})") from error
    if not isinstance(entry, dict) or not str(entry.get("question", "")).strip():
        raise ConfigError(f'{where}: needs an object with a "question"')
    if "answer" not in entry:
        raise ConfigError(f'{where}: needs an "answer"')
    scoring = entry.get("scoring", "exact")
    if scoring not in SCORINGS:
        raise ConfigError(f'{where}: "scoring" {scoring!r} is unknown: use {", ".join(SCORINGS)}')
    documents = _documents(file.parent, where, entry)
    answer = entry["answer"]
    return Task(
        id=str(entry.get("id", number)),
        kind="user",
        documents=documents,
        question=str(entry["question"]),
        answer=answer if isinstance(answer, str) else json.dumps(answer),
        scoring=_as_scoring(scoring),
        length=sum(count(text) for _name, text in documents),
    )


def _as_scoring(name: str) -> Scoring:
    return next(s for s in SCORINGS if s == name)


def _documents(folder: Path, where: str, entry: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    from rlm_desktop.documents import load_paths

    if isinstance(entry.get("context"), str):
        return (("context.txt", entry["context"]),)
    raw = entry.get("documents")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f'{where}: needs "documents" (a list) or "context" (a text)')
    documents: list[tuple[str, str]] = []
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            documents.append(
                (str(item.get("name", f"document {len(documents) + 1}")), item["text"])
            )
            continue
        if not isinstance(item, str):
            raise ConfigError(f'{where}: a document is a path or {{"name", "text"}}')
        loaded = load_paths([_inside(folder, where, item)])
        if loaded.errors or not loaded.documents:
            reason = loaded.errors[0].message if loaded.errors else "nothing loadable in it"
            raise ConfigError(f"{where}: document {item!r}: {reason}")
        documents.extend((doc.name, doc.text) for doc in loaded.documents)
    return tuple(documents)


def _inside(folder: Path, where: str, item: str) -> Path:
    """The path document `item` names, links followed; `ConfigError` when it is outside
    `folder` (the task file's), saying how it got out."""
    try:
        return confined.inside(folder, item)
    except confined.OutsideFolder as outside:
        raise ConfigError(
            f"{where}: document {item!r}: {outside.how} the task file's folder ({folder}); "
            'documents must be inside it (copy the file there, or add it inline as {"name", '
            '"text"})'
        ) from None
