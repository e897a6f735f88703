"""The app takes files from sandboxed folders only as regular files, never through a link: by
descriptors where the system has them (POSIX `dir_fd`, `O_NOFOLLOW`), by names where it has not
(Windows; forced here with `RLM_DESKTOP_PORTABLE`). Every test runs on both paths."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest

from rlm_desktop.engine.sandbox.untrusted_files import (
    UntrustedFile,
    by_descriptor,
    empty_folder,
    extended_length,
    open_new,
    read_regular,
    remove_tree,
)
from rlm_desktop.portability import PORTABLE_ENV
from tests.cli import run_python, unprivileged


@pytest.fixture(autouse=True, params=["descriptors", "names"])
def path_taken(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The path under test, also as the environment that makes a child take it."""
    if request.param == "names":
        monkeypatch.setenv(PORTABLE_ENV, "1")
    else:
        monkeypatch.delenv(PORTABLE_ENV, raising=False)
    assert by_descriptor() is (request.param == "descriptors")
    return {PORTABLE_ENV: "1"} if request.param == "names" else {}


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "id_ed25519"
    path.write_text("PRIVATE")
    return path


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    source = tmp_path / "state"
    source.write_bytes(b"pickled")

    assert read_regular(source, 100) == b"pickled"


def test_a_symbolic_link_is_refused(tmp_path: Path, secret: Path) -> None:
    link = tmp_path / "state"
    link.symlink_to(secret)

    with pytest.raises(UntrustedFile, match="symbolic link"):
        read_regular(link, 100)


def test_a_hard_link_is_refused(tmp_path: Path, secret: Path) -> None:
    link = tmp_path / "state"
    os.link(secret, link)

    with pytest.raises(UntrustedFile, match="hard link"):
        read_regular(link, 100)


def test_a_folder_that_is_a_link_is_refused(tmp_path: Path, secret: Path) -> None:
    (tmp_path / "worker").symlink_to(tmp_path)

    with pytest.raises(OSError, match="Not a directory|Too many levels|a link, not a folder"):
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
        read_regular(big, 100)


def test_a_file_growing_while_it_is_read_stops_at_the_limit(tmp_path: Path) -> None:
    """The limit holds against the bytes read, not only the size seen at opening: a writer
    that keeps appending cannot make the app read more."""
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
        while source.stat().st_size <= 1 << 20:
            pass
        with pytest.raises(UntrustedFile, match="larger than|grew past"):
            read_regular(source, 1 << 20)
    finally:
        stop.set()
        grower.join()


@pytest.mark.skipif(not Path(f"/proc/{os.getpid()}/status").exists(), reason="needs /proc")
def test_a_file_longer_than_its_size_said_is_cut_at_the_limit() -> None:
    """A file whose size said 0 when it was opened (a kernel file here; a file appended to
    between the opening and the read is the same case, but only by chance) is refused when the
    read passes the limit, not returned whole."""
    status = Path(f"/proc/{os.getpid()}/status")

    with pytest.raises(UntrustedFile, match="grew past 10 bytes"):
        read_regular(status, 10)


SWAPPER = """
import os, sys
state, secret = sys.argv[1], sys.argv[2]
n = 0
while True:
    spare = f"{state}.{n % 2}"
    if n % 2:
        os.symlink(secret, spare)
    else:
        with open(spare, "wb") as file:
            file.write(b"mine")
    os.replace(spare, state)
    n += 1
"""


def test_a_file_swapped_for_a_link_while_it_is_opened_is_never_read_through_it(
    tmp_path: Path, secret: Path
) -> None:
    """Model code still running swaps the file the app reads for a link to the user's key and
    back, as fast as it can: each read gets the file or a refusal, never the key (by names, the
    file opened is not the one looked at: without that check the key was read 25 to 105 times
    in two seconds)."""
    state = tmp_path / "state"
    state.write_bytes(b"mine")
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(state), str(secret)])
    outcomes: Counter[bytes | str] = Counter()
    try:
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                outcomes[read_regular(state, 100)] += 1
            except (UntrustedFile, FileNotFoundError) as refused:
                outcomes[type(refused).__name__] += 1
    finally:
        swapper.kill()
        swapper.wait()

    assert b"PRIVATE" not in outcomes, outcomes
    assert outcomes[b"mine"] > 0, outcomes
    assert outcomes["UntrustedFile"] > 0, outcomes


def test_a_new_file_is_never_opened_through_a_link_planted_at_its_name(
    tmp_path: Path, secret: Path
) -> None:
    target = tmp_path / "repl-state.pickle.part"
    target.symlink_to(secret)

    with pytest.raises(FileExistsError):
        open_new(target)
    assert secret.read_text() == "PRIVATE"


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


def test_a_tree_deeper_than_a_name_can_reach_is_removed_without_following_its_links(
    tmp_path: Path, secret: Path
) -> None:
    """3,000 folders deep: past Python's recursion limit and past the longest name Linux takes
    (4,096 bytes); links to a file and a folder outside every seventh level."""
    root = tmp_path / "scratch"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for depth in range(3000):
        os.mkdir("d", dir_fd=fd)
        if depth % 7 == 0:
            os.symlink(secret, "to-secret", dir_fd=fd)
            os.symlink(tmp_path, "to-folder", dir_fd=fd)
        deeper = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.close(fd)

    remove_tree(root)

    assert not root.exists()
    assert secret.read_text() == "PRIVATE"


def test_a_tree_that_is_a_link_is_not_removed_through_it(tmp_path: Path, secret: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "kept").write_text("kept")
    (tmp_path / "scratch").symlink_to(elsewhere, target_is_directory=True)

    with pytest.raises(OSError, match="Not a directory|Too many levels|a link, not a folder"):
        remove_tree(tmp_path / "scratch")
    assert (elsewhere / "kept").read_text() == "kept"


@pytest.mark.parametrize(
    ("path", "name"),
    [
        (PureWindowsPath("C:/Users/ana/AppData/Local/rlm-desktop/scratch/r1"),
         "\\\\?\\C:\\Users\\ana\\AppData\\Local\\rlm-desktop\\scratch\\r1"),
        (PureWindowsPath("//server/share/scratch"), "\\\\?\\UNC\\server\\share\\scratch"),
        (PureWindowsPath("\\\\?\\C:\\scratch"), "\\\\?\\C:\\scratch"),
        (PureWindowsPath("scratch/r1"), "scratch\\r1"),
        (PurePosixPath("/home/ana/scratch"), "/home/ana/scratch"),
    ],
)  # fmt: skip
def test_windows_is_given_absolute_names_past_its_260_character_limit(
    path: PureWindowsPath | PurePosixPath, name: str
) -> None:
    assert extended_length(path) == name


def test_remove_tree_takes_back_folders_model_code_locked(
    tmp_path: Path, secret: Path, path_taken: dict[str, str]
) -> None:
    """Model code, as an ordinary user, fills its folder, then `chmod 000` a subfolder and
    `chmod 500` its parent (issue #41): the clean-up gives them back to their owner and removes
    everything, and a link to a folder outside is neither followed nor changed."""
    root = tmp_path / "scratch"
    (root / "cX" / "locked" / "deeper").mkdir(parents=True)
    (root / "cX" / "locked" / "deeper" / "fill").write_bytes(b"x" * 4096)
    (root / "cX" / "locked" / "fill").write_bytes(b"x" * 4096)
    (root / "cX" / "outside").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o755)
    os.chmod(tmp_path / "elsewhere", 0o755)
    os.chmod(root / "cX" / "locked" / "deeper", 0)
    os.chmod(root / "cX" / "locked", 0)
    os.chmod(root / "cX", 0o500)
    os.chmod(root, 0o500)
    code = (
        "import sys; from pathlib import Path\n"
        "from rlm_desktop.engine.sandbox.untrusted_files import remove_tree\n"
        "remove_tree(Path(sys.argv[1]))\n"
    )
    done = run_python(
        "-c", code, str(root), home=tmp_path / "home", env=path_taken, **unprivileged()
    )
    assert done.returncode == 0, done.stderr
    assert not root.exists()
    assert secret.read_text() == "PRIVATE"
    assert (tmp_path / "elsewhere").stat().st_mode & 0o777 == 0o755


def test_without_its_owner_taking_folders_back_the_lock_holds(tmp_path: Path) -> None:
    """The attack is real for an ordinary user: what `shutil.rmtree` does with the same tree."""
    root = tmp_path / "scratch"
    (root / "locked").mkdir(parents=True)
    (root / "locked" / "fill").write_bytes(b"x")
    os.chmod(root / "locked", 0)
    code = "import shutil, sys\nshutil.rmtree(sys.argv[1])\n"
    done = run_python("-c", code, str(root), home=tmp_path / "home", **unprivileged())
    os.chmod(root / "locked", 0o700)
    assert done.returncode != 0
    assert "Permission denied" in done.stderr


def test_emptying_a_scratch_folder_keeps_it_and_follows_no_link(
    tmp_path: Path, secret: Path
) -> None:
    """What a run's scratch quota empties: files (one read-only, as model code may leave one),
    a deep folder, links to a file and to a folder outside; the folder stays, empty, and
    nothing outside is touched."""
    folder = tmp_path / "scratch"
    (folder / "deep" / "er").mkdir(parents=True)
    (folder / "deep" / "er" / "fill").write_bytes(b"x" * 1024)
    (folder / "kept.bin").write_bytes(b"y")
    os.chmod(folder / "kept.bin", 0o444)
    (folder / "to-secret").symlink_to(secret)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mine.txt").write_text("the user's")
    (folder / "to-folder").symlink_to(outside, target_is_directory=True)

    assert empty_folder(folder) == []

    assert folder.is_dir()
    assert list(folder.iterdir()) == []
    assert secret.read_text() == "PRIVATE"
    assert (outside / "mine.txt").read_text() == "the user's"
