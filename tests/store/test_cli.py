"""`rlm-desktop sessions ...`, driven through its real argument parser."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rlm_desktop.store import Store
from tests.store.conftest import Cli
from tests.store.synthetic import ANSWER, CELL_WORD


@pytest.fixture
def saved(store: Store, record_run: Callable[..., str]) -> str:
    record_run("older-run", turns=1, calls_per_turn=1)
    return record_run("newer-run", turns=2, calls_per_turn=2, child_every=2)


def test_list_json_is_one_object_newest_first(cli: Cli, saved: str) -> None:
    code, out, _ = cli("list", "--json")
    assert code == 0
    sessions = json.loads(out)["sessions"]
    assert {s["id"] for s in sessions} == {"older-run", "newer-run"}
    assert all(s["status"] == "completed" for s in sessions)


def test_list_prints_a_table(cli: Cli, saved: str) -> None:
    code, out, _ = cli("list")
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split()[:3] == ["ID", "STARTED", "STATUS"]
    assert len(rows) == 2
    assert "How many zebrafish" in rows[0]


def test_show_json_is_the_store_shape(cli: Cli, saved: str, store: Store) -> None:
    code, out, _ = cli("show", "newer", "--json")
    assert code == 0
    shown = json.loads(out)
    health = ("findings", "coverage", "sources", "read_to_answer")
    assert set(health) <= set(shown)  # the run's health, beside the stored session
    stored = {k: v for k, v in shown.items() if k not in health}
    assert stored == json.loads(json.dumps(store.session("newer-run")))


def test_show_prints_question_answer_and_tree(cli: Cli, saved: str) -> None:
    code, out, _ = cli("show", "newer-run")
    assert code == 0
    assert "How many zebrafish" in out
    assert ANSWER in out
    assert "      - c2.1 llm" in out


@pytest.mark.parametrize("fmt", ["jsonl", "md", "otlp"])
def test_export_writes_the_file(cli: Cli, saved: str, tmp_path: Path, fmt: str) -> None:
    target = tmp_path / f"out.{fmt}"
    code, out, err = cli("export", "newer-run", "--format", fmt, "-o", str(target))
    assert code == 0
    assert out == ""
    assert str(target) in err
    assert "newer-run" in target.read_text()


def test_export_to_stdout(cli: Cli, saved: str) -> None:
    code, out, _ = cli("export", "newer-run", "--format", "jsonl")
    assert code == 0
    assert json.loads(out.splitlines()[0])["type"] == "metadata"


def test_search_and_delete(cli: Cli, saved: str) -> None:
    code, out, _ = cli("search", CELL_WORD, "--json")
    assert code == 0
    assert [s["id"] for s in json.loads(out)["sessions"]] == ["newer-run", "older-run"]
    assert cli("delete", "older-run") == (0, "deleted older-run\n", "")
    code, out, _ = cli("search", CELL_WORD)
    assert code == 0
    assert out.splitlines()[0].startswith("newer-run")


def test_deleting_a_session_removes_what_its_conversation_kept(cli: Cli, saved: str) -> None:
    from rlm_desktop import paths
    from rlm_desktop.engine.conversation import kept_folder

    kept = kept_folder(paths.scratch_root(), "older-run")
    kept.mkdir(parents=True)
    (kept / "state.pickle").write_bytes(b"document text the REPL held")
    other = kept_folder(paths.scratch_root(), "newer-run")
    other.mkdir(parents=True)
    assert cli("delete", "older-run") == (0, "deleted older-run\n", "")
    assert not kept.exists()
    assert other.exists()


def test_search_prints_each_session_with_where_the_text_was_found(cli: Cli, saved: str) -> None:
    code, out, err = cli("search", CELL_WORD, "--hits", "2")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("newer-run  ")
    assert lines[0].endswith("How many zebrafish are counted?  (+3 more)")
    assert lines[1:3] == [
        "  code · root call · turn 1 · cell 1: parts = llm_query_batched(chunks) "
        "print('[zebrafishcount]', len(parts))",
        "  output · root call · turn 1 · cell 1: [zebrafishcount] 2",
    ]
    assert lines[3].startswith("older-run  ")
    code, out, err = cli("search", "no such words here")
    assert (code, out, err) == (0, "", "nothing matches 'no such words here'\n")
    assert cli("search", CELL_WORD, "--hits", "0")[0] == 2


@pytest.mark.parametrize(
    "argv",
    [
        ("show", "no-such-id"),
        ("show", "no-such-id", "--json"),
        ("export", "no-such-id", "--format", "md"),
        ("delete", "no-such-id"),
    ],
)
def test_an_unknown_id_exits_2_with_one_line(cli: Cli, saved: str, argv: tuple[str, ...]) -> None:
    code, out, err = cli(*argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "no-such-id" in err
    assert "sessions list" in err


def test_an_unwritable_output_is_one_line(cli: Cli, saved: str, tmp_path: Path) -> None:
    target = tmp_path / "missing-folder" / "out.md"
    code, _, err = cli("export", "newer-run", "--format", "md", "-o", str(target))
    assert code == 2
    assert err.count("\n") == 1
    assert "-o FILE" in err
