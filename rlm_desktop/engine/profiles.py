"""Prompt profiles: a system prompt and output-token settings, chosen by model-name pattern.

The bundled profiles live in `resources/profiles/`; a user's edited copies live in the data folder's
`profiles/` and win by name.
"""

from __future__ import annotations

import fnmatch
import string
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_desktop import paths
from rlm_desktop.engine.config import ConfigError

INDEX_FILE = "profiles.toml"


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


def bundled_dir() -> Path:
    """The folder of the profiles shipped with the application."""
    return paths.resource("profiles")


def user_dir() -> Path:
    """The folder of the user's own or edited profiles."""
    return paths.data_dir() / "profiles"


def _read_folder(folder: Path) -> list[Profile]:
    index = folder / INDEX_FILE
    if not index.is_file():
        return []
    try:
        table = tomllib.loads(index.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{index}: not valid TOML ({error}); fix or delete the file") from error
    profiles = []
    for name, entry in table.items():
        prompt_file = folder / str(entry.get("prompt", f"{name}.txt"))
        if not prompt_file.is_file():
            raise ConfigError(f"profile {name!r}: prompt file {prompt_file} is missing")
        profiles.append(
            Profile(
                name=name,
                prompt=prompt_file.read_text(encoding="utf-8"),
                patterns=tuple(entry.get("patterns", [])),
                root_max_output_tokens=int(entry.get("root_max_output_tokens", 8192)),
                sub_max_output_tokens=int(entry.get("sub_max_output_tokens", 4096)),
                description=str(entry.get("description", "")),
                source=prompt_file,
            )
        )
    return profiles


def list_profiles() -> list[Profile]:
    """All profiles in matching order.

    A user profile with a bundled profile's name replaces it in place; the user's new profiles are
    matched before all bundled ones.
    """
    user = {p.name: p for p in _read_folder(user_dir())}
    bundled = _read_folder(bundled_dir())
    bundled_names = {p.name for p in bundled}
    new = [p for name, p in user.items() if name not in bundled_names]
    return new + [user.get(p.name, p) for p in bundled]


def choose_profile(model: str, requested: str | None = None) -> Profile:
    """The profile named `requested`, or the first whose patterns match `model`."""
    profiles = list_profiles()
    if requested:
        for profile in profiles:
            if profile.name == requested:
                return profile
        known = ", ".join(p.name for p in profiles)
        raise ConfigError(f"unknown profile {requested!r}: choose one of {known}")
    for profile in profiles:
        if profile.matches(model):
            return profile
    raise ConfigError("no prompt profile matches; keep a profile with the pattern '*'")
