"""A shared sessions.db whose ids are paths: listed as damaged, never acted on (issue #41).

The attacker's database is made the way their own copy of the app would make it: a run recorded
under a crafted id. Deleting it must not remove the folder the id names, from the command line or
through a prefix of an id that looks like the app's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rlm_desktop import confined, ids, paths
from rlm_desktop.engine.conversation import KEPT_FOLDER, forget, kept_folder
from rlm_desktop.store import SessionNotFound, Store
from tests.store.conftest import Cli

LOOKS_LIKE_OURS = "20261201-101010-abcdef"



@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A folder of the user's, with a file in it, that a crafted id names."""
    folder = tmp_path / "Documents"
    folder.mkdir()
    (folder / "thesis.txt").write_text("four years of work")
    return folder


def _crafted_ids(victim: Path) -> list[str]:
    relative = "../" * (len(paths.scratch_root().parts) + 2) + str(victim).lstrip("/")
    return [str(victim), f"{LOOKS_LIKE_OURS}/{relative}"]


@pytest.mark.parametrize("form", ["absolute", "prefixed"])
def test_deleting_a_crafted_session_removes_no_folder(
    cli: Cli, record_run: Callable[..., str], victim: Path, form: str
) -> None:
    absolute, prefixed = _crafted_ids(victim)
    crafted = absolute if form == "absolute" else prefixed
    record_run(crafted, turns=1, calls_per_turn=1)
    typed = absolute if form == "absolute" else LOOKS_LIKE_OURS
    code, out, err = cli("delete", typed)
    assert (victim / "thesis.txt").read_text() == "four years of work"
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "session id" in err
    code, out, _ = cli("list", "--json")
    listed = json.loads(out)["sessions"]
    assert [row["id"] for row in listed] == [crafted]  # nothing deleted: shown, as damaged
    assert listed[0]["damaged"]


def test_every_command_refuses_a_crafted_session(
    cli: Cli, record_run: Callable[..., str], victim: Path, tmp_path: Path
) -> None:
    record_run(_crafted_ids(victim)[1], turns=1, calls_per_turn=1)
    target = tmp_path / "out.md"
    for argv in (
        ("show", LOOKS_LIKE_OURS),
        ("export", LOOKS_LIKE_OURS, "--format", "md", "-o", str(target)),
        ("health", LOOKS_LIKE_OURS),
    ):
        code, _out, err = cli(*argv)
        assert code == 2, argv
        assert "is not a valid session id" in err, argv
    assert not target.exists()


def test_a_sound_session_beside_a_crafted_one_is_listed_sound(
    store: Store, record_run: Callable[..., str], victim: Path
) -> None:
    record_run(_crafted_ids(victim)[0])
    record_run(LOOKS_LIKE_OURS)
    listed = {row["id"]: row["damaged"] for row in store.list_sessions()}
    assert listed[LOOKS_LIKE_OURS] is None
    assert listed[str(victim)]
    assert store.delete(LOOKS_LIKE_OURS) == LOOKS_LIKE_OURS
    with pytest.raises(SessionNotFound, match="not a session id"):
        store.delete(str(victim))


@pytest.mark.parametrize(
    "crafted",
    ["/home/u/Documents", "..", ".", "a/b", "a\\b", "C:x", "Ab", "con", "nul", "lpt1", "x" * 65, ""],
)
def test_an_id_that_could_name_another_folder_is_refused(crafted: str) -> None:
    assert not ids.is_well_formed(crafted)
    with pytest.raises(ids.MalformedId):
        kept_folder(paths.scratch_root(), crafted)
    with pytest.raises(ids.MalformedId):
        forget(paths.scratch_root(), crafted)


def test_a_kept_folder_that_is_a_link_is_unlinked_not_followed(victim: Path) -> None:
    kept = paths.scratch_root() / KEPT_FOLDER
    kept.mkdir(parents=True)
    (kept / LOOKS_LIKE_OURS).symlink_to(victim, target_is_directory=True)
    with pytest.raises(confined.OutsideFolder):
        kept_folder(paths.scratch_root(), LOOKS_LIKE_OURS)
    forget(paths.scratch_root(), LOOKS_LIKE_OURS)
    assert not (kept / LOOKS_LIKE_OURS).exists()
    assert (victim / "thesis.txt").is_file()


def test_the_apps_own_ids_are_well_formed() -> None:
    from rlm_desktop.engine.run import new_run_id

    assert all(ids.is_well_formed(new_run_id()) for _ in range(50))
