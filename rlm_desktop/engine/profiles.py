"""Prompt profiles: a system prompt and request settings, chosen by model-name pattern.

A profile folder holds a `profiles.toml` index, whose tables name each profile's prompt file,
patterns, output-token settings, whether the model takes a system message (`system_role`), and
how its replies are read (`code_stop`) or held to their shape (`constrained_replies`),
beside the prompt files. The application ships one folder; the user's edited copies live in
another and win by name. The caller says where both are (`ProfileFolders`): the engine does not
know the application's paths.
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

from rlm_desktop.engine.code_stop import AFTER_CODE, CODE_STOPS, WHOLE_REPLY
from rlm_desktop.engine.config import ConfigError

INDEX_FILE = "profiles.toml"
DEFAULT_ROOT_MAX_OUTPUT_TOKENS = 8192
DEFAULT_SUB_MAX_OUTPUT_TOKENS = 4096
CATCH_ALL = "*"
_SAFE_FILE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
_WINDOWS_DEVICE = re.compile(r"CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9]", re.IGNORECASE)
"""Names Windows keeps for devices: no file's name can begin with one and a dot."""


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
    code_stop: str = AFTER_CODE
    """Where a root reply's stream is cut (`code_stop.CODE_STOPS`): after its code, once what
    follows is no further code; after its first block; or never. What is cut, imagined outputs
    and new questions, is never run, so it is not waited for."""
    system_role: bool = True
    """False when the model's chat template has no system role: the system prompt is then sent at
    the top of the first user turn (`message_roles`)."""
    local_servers: bool = False
    """Chosen for a run on the user's own server (an API base is given) when no pattern but the
    catch-all `*` matches its model: shorter replies for a model on a laptop's CPU."""
    constrained_replies: bool = False
    """Ask the server to hold each RLM turn's reply to prose and one `repl` block, where it can
    (llama.cpp, vLLM, Ollama, LM Studio: `constrained_replies`)."""
    source: Path | None = None
    problem: str = ""
    """Why the profile cannot be used ("" when it can): its file is missing or unreadable."""

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
    system_role: bool = True
    code_stop: str = AFTER_CODE
    local_servers: bool = False
    constrained_replies: bool = False


def read_index(folder: Path) -> dict[str, Any]:
    """The folder's index table ({} when there is none); `ConfigError` when it cannot be read,
    is not UTF-8 or is not TOML (one line naming the file and the fix)."""
    index = folder / INDEX_FILE
    if not index.is_file():
        return {}
    try:
        return tomllib.loads(_utf8_text(index))
    except _Unreadable as error:
        raise ConfigError(f"{index}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{index}: not valid TOML ({error}); fix or delete the file") from error


class _Unreadable(Exception):
    """A file that cannot be read as UTF-8 text; the message says why and how to fix it."""


def _utf8_text(path: Path) -> str:
    """The UTF-8 text of `path`; `_Unreadable` when it cannot be read or is not UTF-8."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise _Unreadable(
            f"not readable ({error.strerror or error}); fix its permissions"
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        byte = error.object[error.start]
        raise _Unreadable(
            f"not UTF-8 text (byte 0x{byte:02x} at offset {error.start}); save it as UTF-8"
        ) from None


def _whole_number(entry: dict[str, Any], key: str, default: int) -> int:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be a whole number, not {value!r}")
    return value


def _flag(entry: dict[str, Any], key: str, default: bool) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false, not {value!r}")
    return value


def _code_stop(entry: dict[str, Any], inherited: str) -> str:
    """The entry's `code_stop`. An index written before it says `stop_after_code`: false reads
    as `whole-reply`; true (what every saved profile said) as `inherited`, the rule of the
    bundled profile it replaces (else the default)."""
    if "code_stop" in entry:
        value = entry["code_stop"]
        if value not in CODE_STOPS:
            choices = ", ".join(f'"{choice}"' for choice in CODE_STOPS)
            raise ValueError(f"code_stop must be one of {choices}, not {value!r}")
        return str(value)
    return inherited if _flag(entry, "stop_after_code", True) else WHOLE_REPLY


def _read_profile(
    folder: Path, name: str, entry: Any, inherited: dict[str, str] | None = None
) -> Profile:
    """One entry of a folder's index; a profile that cannot be used carries its `problem`.
    `inherited`: the `code_stop` of the bundled profiles, by name, for a legacy entry."""
    index = folder / INDEX_FILE
    if not isinstance(entry, dict):
        return _broken(
            name, (), None, f"profile {name!r} in {index}: is not a table; write [{name}]"
        )
    patterns = entry.get("patterns", [])
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        return _broken(
            name, (), None, f"profile {name!r} in {index}: patterns must be a list of strings"
        )
    prompt_file = folder / str(entry.get("prompt", f"{name}.txt"))
    try:
        root_tokens = _whole_number(entry, "root_max_output_tokens", DEFAULT_ROOT_MAX_OUTPUT_TOKENS)
        sub_tokens = _whole_number(entry, "sub_max_output_tokens", DEFAULT_SUB_MAX_OUTPUT_TOKENS)
        code_stop = _code_stop(entry, (inherited or {}).get(name, AFTER_CODE))
        system_role = _flag(entry, "system_role", True)
        local_servers = _flag(entry, "local_servers", False)
        constrained_replies = _flag(entry, "constrained_replies", False)
    except ValueError as error:
        return _broken(name, tuple(patterns), prompt_file, f"profile {name!r} in {index}: {error}")
    if not prompt_file.is_file():
        problem = (
            f"profile {name!r}: prompt file {prompt_file} is missing;"
            f" restore it or remove [{name}] from {index}"
        )
        return _broken(name, tuple(patterns), prompt_file, problem)
    try:
        prompt = _utf8_text(prompt_file)
    except _Unreadable as error:
        problem = f"profile {name!r}: prompt file {prompt_file} is {error}"
        return _broken(name, tuple(patterns), prompt_file, problem)
    return Profile(
        name=name,
        prompt=prompt,
        patterns=tuple(patterns),
        root_max_output_tokens=root_tokens,
        sub_max_output_tokens=sub_tokens,
        description=str(entry.get("description", "")),
        code_stop=code_stop,
        system_role=system_role,
        local_servers=local_servers,
        constrained_replies=constrained_replies,
        source=prompt_file,
    )


def _broken(name: str, patterns: tuple[str, ...], source: Path | None, problem: str) -> Profile:
    return Profile(name, "", patterns, 0, 0, source=source, problem=problem)


def _read_folder(folder: Path, inherited: dict[str, str] | None = None) -> list[Profile]:
    """The folder's profiles in index order, broken ones included; `ConfigError` when its
    index cannot be read."""
    return [
        _read_profile(folder, name, entry, inherited) for name, entry in read_index(folder).items()
    ]


@dataclass(frozen=True)
class ProfileSet:
    """What the profile folders hold: every profile in matching order (one that cannot be used
    carries its `problem`), and what kept a whole folder from being read."""

    entries: tuple[Profile, ...]
    unread: tuple[str, ...] = ()

    @property
    def usable(self) -> list[Profile]:
        """The profiles that can be used, in matching order."""
        return [p for p in self.entries if not p.problem]

    @property
    def problems(self) -> tuple[str, ...]:
        """One line for each file that could not be used: what is wrong and how to fix it."""
        return (*self.unread, *(p.problem for p in self.entries if p.problem))


def read_profiles(folders: ProfileFolders) -> ProfileSet:
    """Every profile in matching order; a file that cannot be read is a problem of the set, and
    the other profiles load.

    A user profile with a bundled profile's name replaces it in place; the user's new profiles are
    matched before all bundled ones.
    """
    unread: list[str] = []
    found: list[list[Profile]] = []
    for folder in (folders.bundled, folders.user):
        inherited = {p.name: p.code_stop for p in found[0]} if found else None
        try:
            found.append(_read_folder(folder, inherited))
        except ConfigError as error:
            unread.append(str(error))
            found.append([])
    bundled, user = found[0], {p.name: p for p in found[1]}
    bundled_names = {p.name for p in bundled}
    new = [p for name, p in user.items() if name not in bundled_names]
    return ProfileSet(tuple(new + [user.get(p.name, p) for p in bundled]), tuple(unread[::-1]))


def list_profiles(folders: ProfileFolders) -> list[Profile]:
    """The profiles that can be used, in matching order (`read_profiles` says what could not)."""
    return read_profiles(folders).usable


def choose_profile(
    folders: ProfileFolders, model: str, requested: str | None = None, *, local_server: bool = False
) -> Profile:
    """The profile named `requested`, or the first whose patterns match `model`; on a
    `local_server`, one marked `local_servers` before a match by the catch-all `*` alone.

    `ConfigError` when it is one that cannot be used, or when a folder's index cannot be read
    (what it holds might have been chosen): one line naming the file and the fix.
    """
    found = read_profiles(folders)
    if found.unread:
        raise ConfigError(found.unread[0])
    profiles = found.entries
    if requested:
        chosen = next((p for p in profiles if p.name == requested), None)
        if chosen is None:
            known = ", ".join(p.name for p in found.usable)
            raise ConfigError(
                f"{requested!r} is an unknown profile: choose one of {known}", "profile"
            )
    else:
        chosen = next((p for p in profiles if p.matches(model)), None)
        if local_server and chosen is not None and CATCH_ALL in chosen.patterns:
            chosen = next((p for p in profiles if p.local_servers and not p.problem), chosen)
        if chosen is None:
            raise ConfigError(
                f"is not set and no profile matches {model}: keep a profile with the pattern '*'",
                "profile",
            )
    if chosen.problem:
        raise ConfigError(chosen.problem)
    return chosen


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


def _prompt_file_name(name: str, table: dict[str, Any]) -> str:
    """A file name for profile `name`'s prompt that every system can hold: no Windows device name
    (`con.txt`), and none that another profile's file has in another case (Windows and macOS
    do not tell `Fast.txt` from `fast.txt`)."""
    stem = _SAFE_FILE_NAME.sub("-", name)
    if _WINDOWS_DEVICE.fullmatch(stem.split(".")[0]):
        stem = f"profile-{stem}"
    taken = {str(e.get("prompt", "")).casefold() for n, e in table.items() if n != name}
    candidate, n = f"{stem}.txt", 2
    while candidate.casefold() in taken:
        candidate, n = f"{stem}-{n}.txt", n + 1
    return candidate


def save_user_profile(folder: Path, draft: ProfileDraft) -> Path:
    """Create or update a profile in the user's `folder`; returns its prompt file."""
    folder.mkdir(parents=True, exist_ok=True)
    table = read_index(folder)
    entry = table.get(draft.name, {})
    entry.pop("stop_after_code", None)  # written before `code_stop`, which now says it
    safe_name = _prompt_file_name(draft.name, table)
    prompt_name = str(entry.get("prompt") or safe_name)
    if Path(prompt_name).name != prompt_name or prompt_name in (".", ".."):
        prompt_name = safe_name  # an index that names a file elsewhere is not followed there
    prompt_file = folder / prompt_name
    if prompt_file.is_symlink():
        prompt_file.unlink()
    prompt_file.write_text(draft.prompt, encoding="utf-8")
    table[draft.name] = {
        **entry,
        "prompt": prompt_name,
        "patterns": list(draft.patterns),
        "root_max_output_tokens": draft.root_max_output_tokens,
        "sub_max_output_tokens": draft.sub_max_output_tokens,
        "description": draft.description,
        "system_role": draft.system_role,
        "code_stop": draft.code_stop,
        "local_servers": draft.local_servers,
        "constrained_replies": draft.constrained_replies,
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
