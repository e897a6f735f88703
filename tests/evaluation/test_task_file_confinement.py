"""Documents a task file names stay inside its folder: `eval --task PATH` refuses `../`, an
absolute path and a link that points out, in one line naming the file, the entry and why, and
nothing reaches the provider.

A task file is often someone else's (a shared benchmark): it once could name `~/.ssh/id_ed25519`
or `../../other-project/secrets.txt`, and the file was sent to the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.scripted_server import ScriptedServer

SECRET = "SECRET-7f3a: the private notes of another project\n"
SETTING = "good:model=openai/test-model,mode=direct"


def _task_folder(tmp_path: Path) -> Path:
    """`tmp_path/tasks` beside `tmp_path/private/secret.txt`, with a document of its own."""
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "secret.txt").write_text(SECRET)
    folder = tmp_path / "tasks"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "inventory.txt").write_text("crate 1: apples\ncrate 2: pears\n")
    return folder


def _write(folder: Path, documents: list[str]) -> Path:
    file = folder / "tasks.jsonl"
    task = {"id": "q1", "question": "How many crates hold apples?", "answer": "1"}
    file.write_text(json.dumps({**task, "documents": documents}) + "\n")
    return file


def _eval(server: ScriptedServer, file: Path, home: Path, out: Path) -> tuple[int, str]:
    done = run_cli(
        "eval", "--task", str(file), "--setting", SETTING, "--api-base", server.base_url,
        "--out", str(out), home=home,
    )  # fmt: skip
    return done.returncode, done.stderr


@pytest.mark.parametrize("how", ["parent", "absolute", "link", "linked folder"])
def test_a_document_outside_the_task_files_folder_is_refused_before_anything_is_sent(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path, how: str
) -> None:
    folder = _task_folder(tmp_path)
    secret = tmp_path / "private" / "secret.txt"
    entry = {
        "parent": "../private/secret.txt",
        "absolute": str(secret),
        "link": "docs/notes.txt",
        "linked folder": "shared/secret.txt",
    }[how]
    (folder / "docs" / "notes.txt").symlink_to(secret)
    (folder / "shared").symlink_to(tmp_path / "private", target_is_directory=True)
    file = _write(folder, ["docs/inventory.txt", entry])
    scripted_server.respond_with(lambda request: "1")

    code, stderr = _eval(scripted_server, file, isolated_home, tmp_path / "out")

    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith(f"rlm-desktop eval: {file}, line 1: document {entry!r}: ")
    why = {
        "parent": f"leads outside the task file's folder ({folder})",
        "absolute": f"is an absolute path outside the task file's folder ({folder})",
        "link": f"is a link to {secret}, outside the task file's folder ({folder})",
        "linked folder": f"is a link to {secret}, outside the task file's folder ({folder})",
    }[how]
    assert why in stderr
    assert "documents must be inside it" in stderr
    assert scripted_server.chat_requests() == []
    assert SECRET.strip() not in stderr


def test_documents_inside_the_folder_load_by_any_route_that_stays_inside(
    scripted_server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    folder = _task_folder(tmp_path)
    (folder / "docs" / "same.txt").symlink_to(folder / "docs" / "inventory.txt")
    file = _write(folder, ["docs/../docs/inventory.txt", str(folder / "docs" / "same.txt")])
    scripted_server.respond_with(lambda request: "1")

    code, stderr = _eval(scripted_server, file, isolated_home, tmp_path / "out")

    assert code == 0, stderr
    (request,) = scripted_server.chat_requests()
    sent = json.dumps(request["messages"])
    assert sent.count("crate 1: apples") == 2
    assert "SECRET" not in sent
