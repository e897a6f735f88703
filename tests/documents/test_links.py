"""Folders stay inside themselves: a link out of a loaded folder is skipped and reported."""

from __future__ import annotations

from pathlib import Path

from rlm_desktop.documents import load_paths

SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot-for-models\n"


def _folder_with_links(tmp_path: Path) -> tuple[Path, Path]:
    key = tmp_path / "home" / ".ssh" / "id_ed25519"
    key.parent.mkdir(parents=True)
    key.write_text(SECRET, encoding="utf-8")
    folder = tmp_path / "project"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "data.txt").write_text("inside data\n", encoding="utf-8")
    (folder / "alias.txt").symlink_to(Path("sub") / "data.txt")  # stays inside: followed
    (folder / "key.txt").symlink_to(key)
    (folder / "hop.txt").symlink_to(folder / "sub" / ".." / ".." / "home" / ".ssh" / "id_ed25519")
    return folder, key


def test_links_that_leave_the_folder_are_skipped_with_their_target(tmp_path: Path) -> None:
    folder, key = _folder_with_links(tmp_path)

    result = load_paths([folder])

    assert [d.name for d in result.documents] == ["project/alias.txt"]
    assert all(SECRET not in d.text for d in result.documents)
    reasons = {s.path.name: s.reason for s in result.skipped}
    outside = f"link to a file outside the folder ({key}); to load it, open that file directly"
    assert reasons == {
        "hop.txt": outside,
        "key.txt": outside,
        "data.txt": f"already loaded as {folder / 'alias.txt'}",
    }


def test_a_folder_reached_through_a_link_keeps_its_own_links(tmp_path: Path) -> None:
    folder, _key = _folder_with_links(tmp_path)
    shortcut = tmp_path / "shortcut"
    shortcut.symlink_to(folder)

    result = load_paths([shortcut])

    assert [d.name for d in result.documents] == ["shortcut/alias.txt"]
    assert {s.path.name for s in result.skipped} == {"hop.txt", "key.txt", "data.txt"}


def test_a_link_the_user_names_is_their_choice_and_loads(tmp_path: Path) -> None:
    folder, _key = _folder_with_links(tmp_path)

    result = load_paths([folder / "key.txt"])

    assert [d.text for d in result.documents] == [SECRET]
    assert result.errors == []
