"""Documents a questions file names stay inside its folder (issue #41): a shared questions file
whose row names `~/.ssh/id_ed25519`, `../`, an absolute path, a link or a glob that leads out is
refused before anything runs, in one line naming the row and the path, and nothing reaches the
provider or the results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.batch.scripting import GOOD
from tests.batch.stored import query
from tests.cli import run_cli
from tests.scripted_server import ScriptedServer

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA\n"


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    """A user's home with an SSH key, and a shared folder of questions with a document."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_ed25519"
    key.write_text(KEY)
    shared = tmp_path / "shared"
    (shared / "docs").mkdir(parents=True)
    (shared / "docs" / "contract.txt").write_text("The party is Acme Corporation.\n")
    (shared / "docs" / "notes.txt").symlink_to(key)
    (shared / "keys").symlink_to(home / ".ssh", target_is_directory=True)
    return home, shared


@pytest.mark.parametrize(
    ("how", "named", "why"),
    [
        ("home", "~/.ssh/id_ed25519", "is an absolute path outside"),
        ("parent", "../home/.ssh/id_ed25519", "leads outside"),
        ("absolute", "{key}", "is an absolute path outside"),
        ("link", "docs/notes.txt", "is a link to {key}, outside"),
        ("linked folder", "keys", "is a link to {ssh}, outside"),
        ("glob", "../home/.ssh/*", "leads outside"),
        ("glob through a link", "keys/*", "is a link to {key}, outside"),
    ],
)
def test_a_document_outside_the_questions_folder_is_refused_before_anything_runs(
    server: ScriptedServer, tmp_path: Path, isolated_home: Path,
    how: str, named: str, why: str,
) -> None:  # fmt: skip
    home, shared = _layout(tmp_path)
    key = home / ".ssh" / "id_ed25519"
    named = named.format(key=key)
    questions = shared / "questions.jsonl"
    rows = [{"id": "ok", "question": "Who is the party?", "documents": "docs/contract.txt"},
            {"id": "evil", "question": "Who is the party?", "documents": named}]  # fmt: skip
    questions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    server.respond_with(lambda request: "Acme")
    done = run_cli("batch", "--questions", str(questions), "--api-base", server.base_url,
                   "--setting", f"model=openai/{GOOD},mode=direct",
                   home=isolated_home, env={"HOME": str(home)})  # fmt: skip
    assert done.returncode == 2, (how, done.stderr)
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    said = why.format(key=key, ssh=home / ".ssh")
    assert f"{questions}:2: document {named!r} {said} the questions file's folder" in done.stderr
    assert KEY.strip() not in done.stderr
    assert server.chat_requests() == []
    assert query(isolated_home, "SELECT COUNT(*) FROM batches") in ([], [(0,)])


def test_documents_inside_the_folder_load_by_any_route_that_stays_inside(
    server: ScriptedServer, tmp_path: Path, isolated_home: Path
) -> None:
    _home, shared = _layout(tmp_path)
    (shared / "docs" / "same.txt").symlink_to(shared / "docs" / "contract.txt")
    questions = shared / "questions.csv"
    questions.write_text(
        "id,question,documents\n"
        f"a,Who is the party?,docs/../docs/contract.txt;{shared / 'docs' / 'same.txt'}\n"
    )
    server.respond_with(lambda request: "Acme")
    done = run_cli("batch", "--questions", str(questions), "--api-base", server.base_url,
                   "--setting", f"model=openai/{GOOD},mode=direct", home=isolated_home)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (request,) = server.chat_requests()
    assert "Acme Corporation" in json.dumps(request["messages"])
