"""A search hit names the very word its snippet marks, by its offsets in the field's text, and
its snippet shows that word near its start, over a real run with multi-byte text before each
word (what the window and `sessions search` show and open comes from here)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.events import Event, TurnStarted
from rlm_desktop.store import Store
from rlm_desktop.store.search import segments
from rlm_desktop.store.search_snippet import LEAD, MOST
from tests.review.health_runs import recorded
from tests.scripted_server import ScriptedServer
from tests.store.conftest import Cli
from tests.store.search_places import DOCUMENT, QUESTION, WORDS, responder
from tests.store.synthetic import FakeRun
from tests.synthetic_events import (
    call_started,
    restamp,
    run_finished,
    run_started,
    turn_closed,
)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, str]]:
    """(store, session id) of the run of `search_places`, recorded once for the module."""
    home = tmp_path_factory.mktemp("search-match")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RLM_DESKTOP_HOME", str(home))
        server = ScriptedServer().start()
        store = Store(Path(home) / "sessions.db")
        try:
            run = recorded(store, server, responder(), documents=(DOCUMENT,), query=QUESTION)
            yield store, asyncio.run(run)
        finally:
            store.close()
            server.stop()


def field_text(store: Store, hit: dict[str, Any]) -> str:
    """The whole text of the field `hit` was found in, as the store keeps it."""
    shown = store.session(hit["session_id"])
    if hit.get("call_id") is None:
        return str(shown["session"][hit["field"]])
    if hit.get("turn") is None:  # a call's prompt and response are not in `session`
        row = store.db.execute(
            f"SELECT {hit['field']} FROM calls WHERE session_id = ? AND id = ?",
            [hit["session_id"], hit["call_id"]],
        ).fetchone()
        return str(row[0])
    (turn,) = [
        t for t in shown["turns"] if t["call_id"] == hit["call_id"] and t["index"] == hit["turn"]
    ]
    return str(turn[hit["field"]])


@pytest.mark.parametrize("typed", list(WORDS))
def test_the_best_hit_names_the_offsets_of_the_word_its_snippet_marks(
    zoo: tuple[Store, str], typed: str
) -> None:
    store, session_id = zoo
    field, word = WORDS[typed]
    (found,) = store.search_sessions(typed)
    hit = found["hits"][0]
    assert (hit["session_id"], hit["field"]) == (session_id, field)
    first_marked = next(text for text, matched in segments(hit) if matched)
    assert first_marked == word
    text = field_text(store, hit)
    assert text[hit["start"] : hit["end"]] == word
    assert text.count(word) == 1 or text.index(word) == hit["start"]


@pytest.mark.parametrize("typed", list(WORDS))
def test_a_snippet_shows_its_word_near_its_start(zoo: tuple[Store, str], typed: str) -> None:
    """However long the words before it (a 400-letter word, 3000 letters of output)."""
    store, _ = zoo
    for hit in store.search(typed):
        (first, _end), *_ = hit["marked"]
        assert first <= LEAD + 2, hit["snippet"]
        assert len("".join(text for text, _ in segments(hit))) <= MOST + 2  # and its ellipses


def test_sessions_search_prints_the_word_it_found(
    store: Store, scripted_server: ScriptedServer, cli: Cli
) -> None:
    run = recorded(store, scripted_server, responder(), documents=(DOCUMENT,), query=QUESTION)
    session_id = asyncio.run(run)
    code, out, err = cli("search", "lemurs", "--hits", "3")
    assert (code, err) == (0, "")
    session_line, *hit_lines = out.splitlines()
    assert session_line.startswith(session_id)
    assert hit_lines[0].startswith("  stderr · root call · turn 1 · cell 1: ")
    assert "[lemur]" in hit_lines[0]
    code, out, _ = cli("search", "lemurs", "--json")
    (hit, *_) = json.loads(out)["sessions"][0]["hits"]
    assert field_text(store, hit)[hit["start"] : hit["end"]] == "lemur"


def test_control_characters_in_a_text_do_not_move_the_marks(store: Store) -> None:
    """Printed output is the model's: bytes the snippet's own marks might be made of are text."""
    run = FakeRun("ctrl", EventBus())
    recorder = store.record(run)
    for event in restamp(_printed("ctrl", "a \x02 b \x03 c: the wombat \x02\x03 d"), 1.0):
        run.bus.publish(event)
    recorder.close()
    (hit,) = store.search("wombat")
    assert [text for text, matched in segments(hit) if matched] == ["wombat"]
    assert field_text(store, hit)[hit["start"] : hit["end"]] == "wombat"


def _printed(run_id: str, stdout: str) -> Iterator[Event]:
    yield run_started(run_id, query="What was printed?", mode="rlm", settings={}, documents=[])
    yield call_started(run_id, "c0", None, kind="rlm", depth=0, prompt="What was printed?")
    yield TurnStarted(run_id=run_id, call_id="c0", index=0)
    yield from turn_closed(
        run_id, "c0", 0, 0.0, code="print(out)", stdout=stdout, stderr="", error=None,
        reply="Printing.", observation="", cell_s=0.1, turn_s=0.2,
    )  # fmt: skip
    yield run_finished(
        run_id, answer="done", cost_usd=0.0, input_tokens=1, output_tokens=1, turns=1,
        sub_calls=0, max_depth_reached=1, wall_s=1.0,
    )  # fmt: skip
