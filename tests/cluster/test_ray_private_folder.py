"""`eval --ray local` starts a real Ray cluster whose files only the user can reach.

Left to itself, Ray works in the machine's shared temporary folder (`RAY_TMPDIR`, else /tmp), in
folders it makes writable by every user (0777: another user plants files among its sockets and
logs), and writes the cluster's auth token to `~/.ray/auth_token` under the umask (0644: another
user reads it and runs code on the cluster). Here the shared temporary folder and the home folder
are stand-ins of the test's own, and the data folder is short (Ray's socket paths fit under it)
or deep (they do not, and Ray is given a short name for it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.cli import start_cli
from tests.cluster.conftest import said_until
from tests.cluster.test_ray_eval import SLOW_S, eval_args, task_set
from tests.evaluation.scripting import MODELS, responder
from tests.scripted_server import ScriptedServer

SHORT_NAMES = Path("/tmp")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    server = ScriptedServer(models=MODELS, latency_s=SLOW_S).start()
    yield server
    server.stop()


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A stand-in for the machine's shared temporary folder (sticky, writable by all)."""
    folder = Path(tempfile.mkdtemp(prefix="shared-", dir="/tmp"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=["short", "deep"])
def data_folder(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """The app's data folder: short enough for Ray's socket paths, or far too deep for them."""
    if request.param == "deep":
        yield tmp_path / ("d" * 60) / ("e" * 60) / "home"
        return
    folder = Path(tempfile.mkdtemp(prefix="h-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def short_names_of(folder: Path) -> list[Path]:
    """The folders under /tmp that hold a short name (a link) for `folder`."""
    return [
        found
        for found in SHORT_NAMES.glob("rlm-ray-*")
        if (found / "r").is_symlink() and (found / "r").resolve() == folder.resolve()
    ]


def test_a_cluster_started_here_keeps_its_folder_and_token_private(
    server: ScriptedServer,
    tmp_path: Path,
    shared_tmp: Path,
    data_folder: Path,
) -> None:
    flags, tasks = task_set(tmp_path / "tasks", needles=2)
    server.respond_with(responder(tasks))
    user_home = tmp_path / "user"
    user_home.mkdir()
    args = eval_args(server, flags, "--max-cost", "5", "--ray", "local", "--json")
    process = start_cli(*args, home=data_folder, env={"RAY_TMPDIR": str(shared_tmp),
                        "HOME": str(user_home)}, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)  # fmt: skip
    try:
        said = said_until(process, "[1/")
        ray_folder = data_folder / "ray"
        assert ray_folder.is_dir(), said
        assert mode(ray_folder) == 0o700
        assert mode(ray_folder / "auth_token") == 0o600
        (raylet,) = [
            found
            for found in ray_folder.glob("*/session_*/sockets/raylet")
            if not found.parents[1].is_symlink()  # not again through `session_latest`
        ]
        assert stat.S_ISSOCK(raylet.lstat().st_mode)
        cluster_folder = raylet.parents[2]
        short_names = short_names_of(cluster_folder)
        if data_folder.is_relative_to(tmp_path):  # deep: the socket's path there is too long
            assert len(os.fsencode(raylet)) > 107
            assert [mode(found) for found in short_names] == [0o700]
        else:
            assert short_names == []
        names = [str(cluster_folder), *(str(found / "r") for found in short_names)]
        assert tokens_of_raylets(names) == {str(ray_folder / "auth_token")}
        assert list(shared_tmp.iterdir()) == []
        assert not (user_home / ".ray").exists()
        out, err = process.communicate(timeout=300)
    except BaseException:
        process.kill()
        process.communicate()
        raise

    assert process.returncode == 0, err
    assert json.loads(out)["executor"] == "ray"
    assert [path.name for path in ray_folder.iterdir()] == ["auth_token"]
    assert short_names_of(cluster_folder) == []


def tokens_of_raylets(folders: list[str]) -> set[str | None]:
    """Where the raylets working in `folders` read their token (`RAY_AUTH_TOKEN_PATH`)."""
    found = set()
    for process in psutil.process_iter(["name", "cmdline"]):
        command = " ".join(process.info["cmdline"] or ())
        if process.info["name"] == "raylet" and any(folder in command for folder in folders):
            with contextlib.suppress(psutil.Error):
                found.add(process.environ().get("RAY_AUTH_TOKEN_PATH"))
    return found
