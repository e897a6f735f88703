"""Files that are not trajectories, or are damaged, hostile or too large: one line naming the
file and the line, exit 2, no traceback, and nothing of the file kept."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.exports import export
from rlm_desktop.importing import ImportRefused, import_trajectory
from rlm_desktop.store import Store
from tests.cli import run_cli
from tests.store.conftest import Cli

Lines = list[dict[str, Any]]
TABLES = ("sessions", "calls", "turns", "cells", "llm_requests", "events", "documents")


def _exported(store: Store, record_run: Callable[..., str]) -> Lines:
    session_id = record_run("run-1", turns=2, calls_per_turn=2, child_every=2)
    return [json.loads(line) for line in export(store, session_id, "jsonl").splitlines()]


def _rows(store: Store) -> dict[str, int]:
    with store.lock:
        return {t: store.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def _write(path: Path, lines: Lines) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _sub_call(lines: Lines) -> dict[str, Any]:
    return next(c for it in lines[1:] for b in it["code_blocks"] for c in b["result"]["rlm_calls"])


def _damaged(kind: str, lines: Lines) -> str:
    """The file's text with one kind of damage done to the export `lines`."""
    text = "".join(json.dumps(line) + "\n" for line in lines)
    rows = text.splitlines(keepends=True)
    meta, calls = lines[0], lines[0]["calls"]
    if kind == "neither format":
        return "name,amount\nledger,42\n"
    if kind == "other JSON lines":
        return '{"event": "login", "user": "ann"}\n'
    if kind == "other JSON":
        return '{\n  "name": "not a run"\n}'
    if kind == "damaged line":
        return rows[0] + rows[1] + rows[2][: len(rows[2]) // 2] + "\n" + "".join(rows[3:])
    if kind == "truncated":
        return text[:-40]
    if kind == "empty":
        return "\n  \n"
    if kind == "deep nesting":
        return rows[0] + '{"type": "iteration", "prompt": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    if kind == "NaN":
        return text.replace('"iteration_time": ', '"iteration_time": NaN, "x": ', 1)
    if kind == "infinity":
        return text.replace('"iteration_time": ', '"iteration_time": 1e400, "x": ', 1)
    if kind == "negative":
        calls[1]["input_tokens"] = -5
    elif kind == "path id":
        _sub_call(lines)["call_id"] = "../../x"
    elif kind == "cycle":
        calls[0]["parent_id"] = calls[1]["call_id"]
    elif kind == "parent nowhere":
        calls[1]["parent_id"] = "c999"
    elif kind == "duplicate ids":
        calls.append(dict(calls[1]))
    elif kind == "iteration first":
        return "".join(rows[1:])
    elif kind == "not text":
        meta["query"] = {"nested": True}
    return "".join(json.dumps(line) + "\n" for line in lines)


CASES = {
    "neither format": ("line 1", "not a trajectory"),
    "other JSON lines": ("line 1", "not the start of a trajectory"),
    "other JSON": ("", "not a trajectory"),
    "damaged line": ("line 3", "not JSON"),
    "truncated": ("line", "cut off"),
    "empty": ("", "empty"),
    "deep nesting": ("line 2", "nests deeper"),
    "NaN": ("line 2", "NaN"),
    "infinity": ("line 2", "too large"),
    "negative": ("line 1", "negative"),
    "path id": ("line 2", "is not an id"),
    "cycle": ("line 1", "sits under"),
    "parent nowhere": ("line 1", "sits under"),
    "duplicate ids": ("line 1", "twice"),
    "iteration first": ("line 1", "metadata line"),
    "not text": ("line 1", "not text"),
}


@pytest.mark.parametrize("kind", CASES)
def test_bad_input_is_one_line_exit_2_and_nothing_kept(
    kind: str, store: Store, record_run: Callable[..., str], cli: Cli, tmp_path: Path
) -> None:
    lines = _exported(store, record_run)
    before = _rows(store)
    path = tmp_path / "colleague.jsonl"
    path.write_text(_damaged(kind, lines), encoding="utf-8")
    code, out, err = cli("import", str(path))
    where, what = CASES[kind]
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert err.startswith("rlm-desktop sessions: colleague.jsonl: " + where), err
    assert what in err
    assert _rows(store) == before  # nothing half-imported


def test_a_file_far_too_large_is_refused_before_it_is_read(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as file:
        file.truncate(300 * 1024 * 1024)  # sparse: reading it all would take 300 MB
    with pytest.raises(ImportRefused) as refused:
        import_trajectory(store, path)
    assert str(refused.value) == (
        "huge.jsonl: is 314,572,800 bytes, over the import limit of 268,435,456 bytes"
    )
    assert _rows(store)["sessions"] == 0


def test_a_huge_string_is_kept_within_the_stored_text_cap(
    store: Store, record_run: Callable[..., str], tmp_path: Path
) -> None:
    lines = _exported(store, record_run)
    lines[0]["answer"] = "x" * 5_000_000
    imported = import_trajectory(store, _write(tmp_path / "big.jsonl", lines))
    assert store.session(imported.session_id)["session"]["answer"] == "x" * 5_000_000


def test_the_same_file_twice_is_recognised_not_duplicated(
    store: Store, record_run: Callable[..., str], tmp_path: Path
) -> None:
    path = _write(tmp_path / "shared.jsonl", _exported(store, record_run))
    first = import_trajectory(store, path)
    rows = _rows(store)
    second = import_trajectory(store, path)
    assert (second.duplicate, second.session_id, second.calls, second.turns) == (
        True,
        first.session_id,
        first.calls,
        first.turns,
    )
    assert not first.duplicate
    assert _rows(store) == rows


ESCAPES = "\x1b[2J\x1b]0;owned\x07 \u202eevil\u202c done"


def test_hostile_text_stays_inert_in_the_terminal_and_the_html_export(
    store: Store, record_run: Callable[..., str], tmp_path: Path
) -> None:
    lines = _exported(store, record_run)
    lines[0]["answer"] = lines[0]["query"] = ESCAPES
    path = _write(tmp_path / "hostile\x1b[31m.jsonl", lines)
    home = Path(os.environ["RLM_DESKTOP_HOME"])
    store.close()
    done = run_cli("sessions", "import", str(path), "--json", home=home)
    assert done.returncode == 0, done.stderr
    session_id = json.loads(done.stdout)["session_id"]
    shown = run_cli("sessions", "show", session_id, home=home)
    listed = run_cli("sessions", "list", home=home)
    for output in (done.stdout + done.stderr, shown.stdout, listed.stdout):
        assert "\x1b" not in output
        assert "\u202e" not in output
    assert "\\x1b[2J" in shown.stdout or "\\u001b" in shown.stdout
    html = run_cli("sessions", "export", session_id, "--format", "html", home=home).stdout
    assert "\x1b" not in html
    assert "\u202e" not in html
    assert "evil" in html


def test_the_cli_prints_what_was_imported_and_refuses_a_follow_up(
    store: Store, record_run: Callable[..., str], tmp_path: Path
) -> None:
    path = _write(tmp_path / "from-a-colleague.jsonl", _exported(store, record_run))
    home = Path(os.environ["RLM_DESKTOP_HOME"])
    store.close()
    done = run_cli("sessions", "import", str(path), "--json", home=home)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert {"session_id", "source", "calls", "turns"} <= set(printed)
    assert (printed["source"], printed["duplicate"]) == ("rlm-desktop", False)
    listed = json.loads(run_cli("sessions", "list", "--json", home=home).stdout)["sessions"]
    assert [s["imported"]["file"] for s in listed if s["id"] == printed["session_id"]] == [
        "from-a-colleague.jsonl"
    ]
    again = run_cli("sessions", "import", str(path), home=home)
    assert again.returncode == 0
    assert "already imported" in again.stdout
    follow = run_cli("run", "--continue", printed["session_id"], "--query", "and then?",
                     "--api-base", "http://127.0.0.1:9/v1", home=home)  # fmt: skip
    assert follow.returncode == 2
    assert "read-only" in follow.stderr
    assert "Traceback" not in follow.stderr
    assert follow.stderr.strip().count("\n") == 0, follow.stderr
