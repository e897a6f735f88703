"""The app takes files from sandboxed folders only as regular files, never through a link."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from rlm_desktop.engine.sandbox.untrusted_files import (
    UntrustedFile,
    copy_regular,
    read_regular,
    remove_tree,
)


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "id_ed25519"
    path.write_text("PRIVATE")
    return path


def test_a_regular_file_is_read_and_copied(tmp_path: Path) -> None:
    source = tmp_path / "state"
    source.write_bytes(b"pickled")
    target = tmp_path / "kept" / "state"
    target.parent.mkdir()

    assert read_regular(source, 100) == b"pickled"
    assert copy_regular(source, target, 100) == 7
    assert target.read_bytes() == b"pickled"
    assert not target.with_name("state.part").exists()


def test_a_symbolic_link_is_refused(tmp_path: Path, secret: Path) -> None:
    link = tmp_path / "state"
    link.symlink_to(secret)

    with pytest.raises(UntrustedFile, match="symbolic link"):
        read_regular(link, 100)
    with pytest.raises(UntrustedFile, match="symbolic link"):
        copy_regular(link, tmp_path / "copy", 100)
    assert not (tmp_path / "copy").exists()


def test_a_hard_link_is_refused(tmp_path: Path, secret: Path) -> None:
    link = tmp_path / "state"
    os.link(secret, link)

    with pytest.raises(UntrustedFile, match="hard link"):
        read_regular(link, 100)


def test_a_folder_that_is_a_link_is_refused(tmp_path: Path, secret: Path) -> None:
    (tmp_path / "worker").symlink_to(tmp_path)

    with pytest.raises(OSError, match="Not a directory|Too many levels"):
        read_regular(tmp_path / "worker" / secret.name, 100)


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    pipe = tmp_path / "state"
    os.mkfifo(pipe)

    with pytest.raises(UntrustedFile, match="named pipe"):
        read_regular(pipe, 100)


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "state"
    big.write_bytes(b"x" * 101)

    with pytest.raises(UntrustedFile, match="larger than 100 bytes"):
        copy_regular(big, tmp_path / "copy", 100)


def test_a_file_growing_while_it_is_copied_stops_at_the_limit(tmp_path: Path) -> None:
    """The limit holds against the bytes read, not only the size seen at opening: a writer
    that keeps appending cannot make the app copy more."""
    source = tmp_path / "state"
    source.write_bytes(b"")
    stop = threading.Event()

    def grow() -> None:
        with source.open("ab") as writer:
            while not stop.is_set():
                writer.write(b"y" * 65536)
                writer.flush()

    grower = threading.Thread(target=grow)
    grower.start()
    try:
        while source.stat().st_size < 1 << 20:
            pass
        with pytest.raises(UntrustedFile, match="larger than|grew past"):
            copy_regular(source, tmp_path / "copy", 1 << 20)
    finally:
        stop.set()
        grower.join()
    assert not (tmp_path / "copy").exists()
    assert not (tmp_path / "copy.part").exists()


def test_a_link_planted_at_the_target_is_replaced_not_followed(
    tmp_path: Path, secret: Path
) -> None:
    source = tmp_path / "state"
    source.write_bytes(b"pickled")
    target = tmp_path / "new-worker-state"
    target.symlink_to(secret)
    target.with_name(target.name + ".part").symlink_to(secret)

    copy_regular(source, target, 100)

    assert secret.read_text() == "PRIVATE"
    assert not target.is_symlink()
    assert target.read_bytes() == b"pickled"


def test_remove_tree_removes_everything_and_follows_no_link(tmp_path: Path, secret: Path) -> None:
    root = tmp_path / "scratch"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "file").write_text("x")
    (root / "a" / "to-secret").symlink_to(secret)
    (root / "a" / "to-folder").symlink_to(tmp_path)
    os.mkfifo(root / "pipe")

    remove_tree(root)

    assert not root.exists()
    assert secret.read_text() == "PRIVATE"
