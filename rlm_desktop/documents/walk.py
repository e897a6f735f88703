"""Walking a folder: which files to load, in a stable order, and a reason for everything left out.

The policy, close to ripgrep's defaults: entries are visited depth-first in case-insensitive name
order; `.gitignore` files are honoured (those of the enclosing git repository above the folder
too); hidden files and folders, version-control data, virtual environments, dependency, build and
cache folders, binary and unsupported files, lock files and minified assets are skipped; symbolic
links to folders are not followed, and links to files outside the folder are skipped (a link to
`~/.ssh/id_ed25519` must not put the key into the context; the user can open the target itself).
A skipped folder is reported once, not file by file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rlm_desktop.documents.formats import generated, refusal
from rlm_desktop.documents.model import LoadOptions, Skipped

SKIPPED_FOLDERS: dict[str, str] = {
    **dict.fromkeys((".git", ".hg", ".svn", ".bzr", "_darcs"), "version-control data"),
    **dict.fromkeys((".venv", "venv", "virtualenv", ".conda"), "virtual environment"),
    **dict.fromkeys(
        ("node_modules", "bower_components", "site-packages", "jspm_packages"),
        "installed dependencies",
    ),
    **dict.fromkeys(
        ("build", "dist", "target", "_build", ".eggs", ".next", ".nuxt", "htmlcov"), "build output"
    ),
    **dict.fromkeys(
        (
            "__pycache__",
            ".mypy_cache",
            ".pytest_cache",
            ".ruff_cache",
            ".tox",
            ".nox",
            ".cache",
            ".gradle",
            ".parcel-cache",
            ".terraform",
            ".ipynb_checkpoints",
        ),
        "cache",
    ),
}
"""Folder names never descended into, with the reason reported."""

_VENV_MARKERS = ("pyvenv.cfg", "conda-meta")
GITIGNORED = "ignored by .gitignore"
EXCLUDED = "matches an exclude pattern"

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


@dataclass(frozen=True)
class Found:
    """A file inside a folder that passed the policy; `name` is `folder/relative/path`."""

    path: Path
    name: str


class _Rules:
    """gitignore-style rule sets, each applying below its own folder; the deepest match wins."""

    def __init__(self) -> None:
        self._specs: list[tuple[str, GitIgnoreSpec]] = []
        self._exclude: tuple[str, GitIgnoreSpec] | None = None

    @staticmethod
    def _compile(base: Path, lines: list[str]) -> tuple[str, GitIgnoreSpec]:
        from pathspec import GitIgnoreSpec

        return base.as_posix().rstrip("/") + "/", GitIgnoreSpec.from_lines(lines)

    def add(self, base: Path, lines: list[str]) -> None:
        self._specs.append(self._compile(base, lines))

    def exclude(self, base: Path, lines: list[str]) -> None:
        """Patterns that win over every .gitignore (the user's own exclusions)."""
        self._exclude = self._compile(base, lines)

    def add_file(self, base: Path) -> bool:
        try:
            lines = (base / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return False
        self.add(base, lines)
        return True

    def pop(self) -> None:
        self._specs.pop()

    def ignored(self, path: Path, is_dir: bool) -> str | None:
        """The reason `path` is ignored, or None."""
        full = path.as_posix() + ("/" if is_dir else "")
        if self._exclude is not None:
            base, spec = self._exclude
            if full.startswith(base) and spec.check_file(full[len(base) :]).include:
                return EXCLUDED
        verdict = False
        for base, spec in self._specs:
            if full.startswith(base):
                include = spec.check_file(full[len(base) :]).include
                if include is not None:
                    verdict = include
        return GITIGNORED if verdict else None


def _repository_rules(root: Path) -> _Rules:
    """Rules from the .gitignore files between the enclosing repository's top and `root`."""
    rules = _Rules()
    ancestors = []
    for parent in root.parents:
        ancestors.append(parent)
        if (parent / ".git").exists():
            break
    else:
        return rules
    for folder in reversed(ancestors):
        rules.add_file(folder)
    if rules.ignored(root, is_dir=True) is not None:
        return _Rules()  # the user picked an ignored folder on purpose: load what is in it
    return rules


def _folder_reason(entry: os.DirEntry[str], options: LoadOptions) -> str | None:
    if entry.is_symlink():
        return "symbolic link to a folder (not followed)"
    if entry.name in SKIPPED_FOLDERS or entry.name.endswith(".egg-info"):
        return SKIPPED_FOLDERS.get(entry.name, "build output")
    if any(os.path.exists(os.path.join(entry.path, m)) for m in _VENV_MARKERS):
        return "virtual environment"
    if entry.name.startswith(".") and not options.include_hidden:
        return "hidden folder"
    return None


def _link_leaves(path: Path, inside: str) -> str | None:
    """Why a link to a file is not followed: its target is outside the folder `inside`."""
    target = os.path.realpath(path)
    try:
        if os.path.commonpath([target, inside]) == inside:
            return None
    except ValueError:  # another drive (Windows): outside
        pass
    return f"link to a file outside the folder ({target}); to load it, open that file directly"


def _file_reason(path: Path, options: LoadOptions) -> str | None:
    if path.name.startswith(".") and not options.include_hidden:
        return "hidden file"
    return refusal(path) or generated(path)


def iter_folder(root: Path, options: LoadOptions) -> Iterator[Found | Skipped]:
    """Every file under `root` to load, and every entry skipped, in a stable order."""
    root = Path(os.path.abspath(root))
    rules = _repository_rules(root) if options.use_gitignore else _Rules()
    if options.exclude:
        rules.exclude(root, list(options.exclude))
    yield from _walk(root, root.name, rules, options, os.path.realpath(root))


def _walk(
    folder: Path,
    prefix: str,
    rules: _Rules,
    options: LoadOptions,
    inside: str,
) -> Iterator[Found | Skipped]:
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: (e.name.casefold(), e.name))
    except OSError as exc:
        yield Skipped(folder, f"cannot list folder ({exc.strerror or exc}); check its permissions")
        return
    pushed = options.use_gitignore and rules.add_file(folder)
    for entry in entries:
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            reason = _folder_reason(entry, options)
        elif not entry.is_file():
            reason = "broken link or special file (not a regular file)"
        elif entry.is_symlink():
            reason = _link_leaves(path, inside) or _file_reason(path, options)
        else:
            reason = _file_reason(path, options)
        if reason is None:
            reason = rules.ignored(path, is_dir)
        if reason is not None:
            yield Skipped(path, reason)
        elif is_dir:
            yield from _walk(path, f"{prefix}/{entry.name}", rules, options, inside)
        else:
            yield Found(path, f"{prefix}/{entry.name}")
    if pushed:
        rules.pop()
