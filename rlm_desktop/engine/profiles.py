"""Prompt profiles: a system prompt and output-token settings, chosen by model-name pattern.

A profile folder holds a `profiles.toml` index, whose tables name each profile's prompt file,
patterns and output-token settings, beside the prompt files. The application ships one folder; the
user's edited copies live in another and win by name. The caller says where both are
(`ProfileFolders`): the engine does not know the application's paths.
"""

from __future__ import annotations

import fnmatch
import json
import re
import string
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop.engine.config import ConfigError

INDEX_FILE = "profiles.toml"
DEFAULT_ROOT_MAX_OUTPUT_TOKENS = 8192
DEFAULT_SUB_MAX_OUTPUT_TOKENS = 4096
_SAFE_FILE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class ProfileFolders:
    """Where profiles are read from: the bundled folder, and the user's (tried first)."""

    bundled: Path
    user: Path


@dataclass(frozen=True)
class Profile:
    """One prompt profile."""

    name: str
    prompt: str
    patterns: tuple[str, ...]
    root_max_output_tokens: int
    sub_max_output_tokens: int
    description: str = ""
    source: Path | None = None

    def matches(self, model: str) -> bool:
        """True when a pattern matches the model name (case-insensitive)."""
        name = model.lower()
        return any(fnmatch.fnmatchcase(name, pattern.lower()) for pattern in self.patterns)

    def system_prompt(self, **values: Any) -> str:
        """The prompt with `$placeholders` filled in (unknown ones are left as written)."""
        return string.Template(self.prompt).safe_substitute(values)

    def is_in(self, folder: Path) -> bool:
        """True when the profile was read from `folder`."""
        return self.source is not None and self.source.parent == folder


@dataclass(frozen=True)
class ProfileDraft:
    """The editable parts of a profile, as the user's folder stores them."""

    name: str
    prompt: str
    patterns: tuple[str, ...] = ()
    root_max_output_tokens: int = DEFAULT_ROOT_MAX_OUTPUT_TOKENS
    sub_max_output_tokens: int = DEFAULT_SUB_MAX_OUTPUT_TOKENS
    description: str = ""


def read_index(folder: Path) -> dict[str, Any]:
    """The folder's index table ({} when there is none); `ConfigError` when it is not TOML."""
    index = folder / INDEX_FILE
    if not index.is_file():
        return {}
    try:
        return tomllib.loads(index.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{index}: not valid TOML ({error}); fix or delete the file") from error


def _read_folder(folder: Path) -> list[Profile]:
    profiles = []
    for name, entry in read_index(folder).items():
        prompt_file = folder / str(entry.get("prompt", f"{name}.txt"))
        if not prompt_file.is_file():
            raise ConfigError(f"profile {name!r}: prompt file {prompt_file} is missing")
        profiles.append(
            Profile(
                name=name,
                prompt=prompt_file.read_text(encoding="utf-8"),
                patterns=tuple(entry.get("patterns", [])),
                root_max_output_tokens=int(
                    entry.get("root_max_output_tokens", DEFAULT_ROOT_MAX_OUTPUT_TOKENS)
                ),
                sub_max_output_tokens=int(
                    entry.get("sub_max_output_tokens", DEFAULT_SUB_MAX_OUTPUT_TOKENS)
                ),
                description=str(entry.get("description", "")),
                source=prompt_file,
            )
        )
    return profiles


def list_profiles(folders: ProfileFolders) -> list[Profile]:
    """All profiles in matching order.

    A user profile with a bundled profile's name replaces it in place; the user's new profiles are
    matched before all bundled ones.
    """
    user = {p.name: p for p in _read_folder(folders.user)}
    bundled = _read_folder(folders.bundled)
    bundled_names = {p.name for p in bundled}
    new = [p for name, p in user.items() if name not in bundled_names]
    return new + [user.get(p.name, p) for p in bundled]


def choose_profile(folders: ProfileFolders, model: str, requested: str | None = None) -> Profile:
    """The profile named `requested`, or the first whose patterns match `model`."""
    profiles = list_profiles(folders)
    if requested:
        for profile in profiles:
            if profile.name == requested:
                return profile
        known = ", ".join(p.name for p in profiles)
        raise ConfigError(f"{requested!r} is an unknown profile: choose one of {known}", "profile")
    for profile in profiles:
        if profile.matches(model):
            return profile
    raise ConfigError(
        f"is not set and no profile matches {model}: keep a profile with the pattern '*'", "profile"
    )


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


def save_user_profile(folder: Path, draft: ProfileDraft) -> Path:
    """Create or update a profile in the user's `folder`; returns its prompt file."""
    folder.mkdir(parents=True, exist_ok=True)
    table = read_index(folder)
    entry = table.get(draft.name, {})
    prompt_name = str(entry.get("prompt") or f"{_SAFE_FILE_NAME.sub('-', draft.name)}.txt")
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


def delete_user_profile(folder: Path, name: str) -> None:
    """Remove a profile and its prompt file from the user's `folder` (a missing one is fine)."""
    table = read_index(folder)
    entry = table.pop(name, None)
    if entry is None:
        return
    prompt = folder / str(entry.get("prompt") or "")
    if prompt.is_file() and prompt.parent == folder:
        prompt.unlink()
    write_index(folder, table)
