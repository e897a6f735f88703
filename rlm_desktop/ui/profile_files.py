"""Reading and writing the user's prompt-profile folder (no Qt).

The format is the engine's (`rlm_desktop.engine.profiles`): a `profiles.toml` index whose tables
name each profile's prompt file, patterns and output-token settings, beside the prompt files.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop.paths import data_dir

INDEX_FILE = "profiles.toml"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class ProfileDraft:
    """The editable parts of a profile."""

    name: str
    prompt: str
    patterns: tuple[str, ...] = ()
    root_max_output_tokens: int = 8192
    sub_max_output_tokens: int = 4096
    description: str = ""


def user_dir() -> Path:
    """The folder of the user's profiles (created on demand)."""
    folder = data_dir() / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def read_index(folder: Path) -> dict[str, Any]:
    """The folder's index table ({} when there is none)."""
    index = folder / INDEX_FILE
    if not index.is_file():
        return {}
    return tomllib.loads(index.read_text(encoding="utf-8"))


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def write_index(folder: Path, table: dict[str, dict[str, Any]]) -> None:
    """Write `table` as the folder's `profiles.toml` (atomically)."""
    lines = ["# Your prompt profiles; RLM Desktop's settings page writes this file.", ""]
    for name, entry in table.items():
        lines.append(f"[{json.dumps(name, ensure_ascii=False)}]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in entry.items()]
        lines.append("")
    target = folder / INDEX_FILE
    temporary = target.with_suffix(".toml.tmp")
    temporary.write_text("\n".join(lines), encoding="utf-8")
    temporary.replace(target)


def free_name(name: str, taken: set[str]) -> str:
    """`name-copy`, or `name-copy-2`, … whichever is not taken."""
    candidate, n = f"{name}-copy", 2
    while candidate in taken:
        candidate, n = f"{name}-copy-{n}", n + 1
    return candidate


def save_user_profile(draft: ProfileDraft) -> Path:
    """Create or update a user profile; returns its prompt file."""
    folder = user_dir()
    table = read_index(folder)
    entry = table.get(draft.name, {})
    prompt_name = str(entry.get("prompt") or f"{_SAFE.sub('-', draft.name)}.txt")
    prompt_file = folder / prompt_name
    prompt_file.write_text(draft.prompt, encoding="utf-8")
    table[draft.name] = {
        "prompt": prompt_name,
        "patterns": list(draft.patterns),
        "root_max_output_tokens": draft.root_max_output_tokens,
        "sub_max_output_tokens": draft.sub_max_output_tokens,
        "description": draft.description,
    }
    write_index(folder, table)
    return prompt_file


def delete_user_profile(name: str) -> None:
    """Remove a user profile and its prompt file (a missing one is fine)."""
    folder = user_dir()
    table = read_index(folder)
    entry = table.pop(name, None)
    if entry is None:
        return
    prompt = folder / str(entry.get("prompt") or "")
    if prompt.is_file() and prompt.parent == folder:
        prompt.unlink()
    write_index(folder, table)
