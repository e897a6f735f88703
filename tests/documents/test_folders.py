"""The folder policy: what is loaded, what is skipped and why, and in which order."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlm_desktop.documents import LoadOptions, Skipped, load_paths


def _write(path: Path, data: bytes | str = "text\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    _write(root / ".gitignore", "*.log\n!keep.log\nsecret/\n")
    _write(root / ".git" / "config", "[core]\n")
    _write(root / ".env", "API_KEY=do-not-send\n")
    _write(root / "a.txt", "alpha\n")
    _write(root / "B.md", "# beta\n")
    _write(root / "debug.log", "noise\n")
    _write(root / "keep.log", "kept log\n")
    _write(root / "secret" / "plan.txt", "hidden plan\n")
    _write(root / "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    _write(root / "blob.weird", b"MZ\x90\x00\x03\x00\x00\x00binary")
    _write(root / "empty.txt", b"")
    _write(root / "data.numbers", b"PK\x03\x04")
    _write(root / "package-lock.json", "{}\n")
    _write(root / "node_modules" / "pkg" / "index.js", "module.exports = 1;\n")
    _write(root / "build" / "out.txt", "built\n")
    _write(root / "src" / "__pycache__" / "main.cpython-311.pyc", b"\x00\x01")
    _write(root / "src" / ".gitignore", "generated_*.py\n")
    _write(root / "src" / "generated_api.py", "x = 1\n")
    _write(root / "src" / "main.py", "print('main')\n")
    _write(root / "tools" / "env" / "pyvenv.cfg", "home = /usr/bin\n")
    _write(root / "tools" / "env" / "lib" / "site.py", "import os\n")
    _write(root / "tools" / "run.sh", "echo run\n")
    os.symlink(root / "src", root / "src-link")
    return root


def _reasons(skipped: list[Skipped], root: Path) -> dict[str, str]:
    return {
        s.path.relative_to(root).as_posix(): s.reason.split(" (")[0].split(";")[0] for s in skipped
    }


def test_policy_loads_the_right_files_and_says_why_for_the_rest(project: Path) -> None:
    result = load_paths([project])
    assert result.errors == []
    assert [d.name for d in result.documents] == [
        "proj/a.txt",
        "proj/B.md",
        "proj/keep.log",
        "proj/src/main.py",
        "proj/tools/run.sh",
    ]
    assert _reasons(result.skipped, project) == {
        ".env": "hidden file",
        ".git": "version-control data",
        ".gitignore": "hidden file",
        "blob.weird": "binary content",
        "build": "build output",
        "data.numbers": ".numbers files are not supported",
        "debug.log": "ignored by .gitignore",
        "empty.txt": "empty file",
        "logo.png": "damaged or unsupported image",  # a PNG header and nothing after
        "node_modules": "installed dependencies",
        "package-lock.json": "generated lock file",
        "secret": "ignored by .gitignore",
        "src/.gitignore": "hidden file",
        "src/__pycache__": "cache",
        "src/generated_api.py": "ignored by .gitignore",
        "src-link": "symbolic link to a folder",
        "tools/env": "virtual environment",
    }


def test_order_is_stable_across_loads(project: Path) -> None:
    first = load_paths([project])
    second = load_paths([project])
    assert [d.name for d in first.documents] == [d.name for d in second.documents]
    assert first.skipped == second.skipped


def test_gitignore_can_be_turned_off_and_hidden_files_on(project: Path) -> None:
    result = load_paths([project], LoadOptions(use_gitignore=False, include_hidden=True))
    names = {d.name for d in result.documents}
    assert {
        "proj/debug.log",
        "proj/secret/plan.txt",
        "proj/.env",
        "proj/src/generated_api.py",
        "proj/.gitignore",
    } <= names
    assert "proj/.git/config" not in names


def test_exclude_patterns_win_over_gitignore_negations(project: Path) -> None:
    result = load_paths([project], LoadOptions(exclude=("*.log", "src/")))
    assert [d.name for d in result.documents] == ["proj/a.txt", "proj/B.md", "proj/tools/run.sh"]
    reasons = _reasons(result.skipped, project)
    assert reasons["keep.log"] == reasons["src"] == "matches an exclude pattern"


def test_gitignore_of_the_enclosing_repository_applies(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _write(repo / ".git" / "HEAD", "ref: refs/heads/main\n")
    _write(repo / ".gitignore", "*.tmp\n")
    _write(repo / "docs" / "notes.txt", "notes\n")
    _write(repo / "docs" / "scratch.tmp", "scratch\n")
    result = load_paths([repo / "docs"])
    assert [d.name for d in result.documents] == ["docs/notes.txt"]
    assert [(s.path.name, s.reason) for s in result.skipped] == [
        ("scratch.tmp", "ignored by .gitignore")
    ]


def test_a_folder_picked_on_purpose_loads_even_if_ignored(project: Path) -> None:
    result = load_paths([project / "secret"])
    assert [d.name for d in result.documents] == ["secret/plan.txt"]


def test_problem_files_inside_a_folder_are_skips_not_errors(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    _write(folder / "good.txt", "fine\n")
    _write(folder / "broken.pdf", b"%PDF-1.7\nthis is not really a pdf\n")
    result = load_paths([folder])
    assert result.errors == []
    assert [d.name for d in result.documents] == ["papers/good.txt"]
    assert [s.path.name for s in result.skipped] == ["broken.pdf"]
    assert "damaged PDF" in result.skipped[0].reason


def test_an_empty_folder_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "nothing"
    empty.mkdir()
    result = load_paths([empty])
    assert result.documents == []
    assert result.skipped == []
    assert [(e.path, e.message) for e in result.errors] == [
        (empty, "the folder is empty; choose a folder that holds documents")
    ]


def test_a_folder_with_nothing_loadable_says_what_was_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "assets"
    _write(folder / "a.png", b"\x89PNG")
    _write(folder / "b.png", b"\x89PNG")
    _write(folder / ".hidden", "x\n")
    result = load_paths([folder])
    assert len(result.skipped) == 3
    [error] = result.errors
    assert error.path == folder
    expected = (
        "no loadable files in this folder (skipped: 2 damaged or unsupported image, 1 hidden file)"
    )
    assert expected in error.message
    assert "\n" not in str(error)
