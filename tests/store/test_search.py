"""Search finds every kind of text a run keeps, says where it was found, and keeps up with writes."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from rlm_desktop.engine.bus import EventBus
from rlm_desktop.engine.events import Event
from rlm_desktop.store import Store
from rlm_desktop.store.search import segments
from tests.store.real_sessions import real_sessions
from tests.store.searchable import WORDS, searchable_run
from tests.store.synthetic import FakeRun

__all__ = ["real_sessions"]

INDEXES = ("sessions_fts", "calls_fts", "turns_fts", "cells_fts")


@pytest.fixture
def record(store: Store) -> Callable[[str, Iterable[Event]], str]:
    """Record `events` as session `run_id` through a real bus and recorder."""

    def recorded(run_id: str, events: Iterable[Event]) -> str:
        run = FakeRun(run_id, EventBus())
        recorder = store.record(run)
        for event in events:
            run.bus.publish(event)
        recorder.close()
        return run_id

    return recorded


@pytest.mark.parametrize("word", list(WORDS))
def test_each_kind_of_text_is_found_once_with_its_place(
    store: Store, record: Callable[[str, Iterable[Event]], str], word: str
) -> None:
    record("zoo", searchable_run("zoo"))
    field, place = WORDS[word]
    hits = [hit for hit in store.search(word) if hit["field"] == field]
    assert [hit["place"] for hit in hits] == [place]
    assert hits[0]["session_id"] == "zoo"
    assert f"[{word}]" in hits[0]["snippet"]


def test_the_root_calls_copy_of_the_question_is_not_a_second_hit(
    store: Store, record: Callable[[str, Iterable[Event]], str]
) -> None:
    record("zoo", searchable_run("zoo"))
    assert [hit["place"] for hit in store.search("axolotl")] == ["question", "answer"]


def test_sessions_are_listed_newest_first_with_their_best_places(
    store: Store, record: Callable[[str, Iterable[Event]], str]
) -> None:
    record("older", searchable_run("older", start=1_700_000_000.0))
    record("newer", searchable_run("newer", start=1_800_000_000.0))
    found = store.search_sessions("tank", hits_per_session=2)
    assert [session["id"] for session in found] == ["newer", "older"]
    newer = found[0]
    assert newer["query"] == "Which tank holds the axolotl?"
    assert [hit["place"] for hit in newer["hits"]] == ["question", "answer"]
    # the session's own row, the prompts of c1 and c2, cell 1 (output), turn 1 (observation
    # is not searched, the reply does not say "tank")
    assert newer["matches"] == 4
    assert newer["more"] == 3
    assert [s["id"] for s in store.search_sessions("tank", limit=1)] == ["newer"]
    assert store.search_sessions("nothing-like-this") == []
    assert store.search_sessions("  ") == []


def test_listing_with_a_search_covers_every_field(
    store: Store, record: Callable[[str, Iterable[Event]], str]
) -> None:
    record("zoo", searchable_run("zoo"))
    for word in WORDS:
        assert [s["id"] for s in store.list_sessions(search=word)] == ["zoo"], word


def test_a_deleted_session_is_no_longer_found_and_the_indexes_stay_consistent(
    store: Store, record: Callable[[str, Iterable[Event]], str]
) -> None:
    record("kept", searchable_run("kept"))
    record("gone", searchable_run("gone"))
    store.delete("gone")
    for word in WORDS:
        assert {hit["session_id"] for hit in store.search(word)} == {"kept"}, word
    for index in INDEXES:
        store.db.execute(f"INSERT INTO {index} ({index}) VALUES ('integrity-check')")


def test_a_snippet_splits_into_matched_and_plain_pieces(
    store: Store, record: Callable[[str, Iterable[Event]], str]
) -> None:
    record("zoo", searchable_run("zoo"))
    [hit] = [hit for hit in store.search("numbat") if hit["field"] == "code"]
    assert hit["snippet"] == "print(find('[numbat]'))"
    assert list(segments(hit)) == [("print(find('", False), ("numbat", True), ("'))", False)]


def test_a_search_while_a_run_is_recorded_sees_it_and_keeps_up_with_it(store: Store) -> None:
    """The writer queues rows; a search indexes the queue, even in the middle of a run, and
    rows that change after that (a call that finishes) are indexed again, once."""
    events = list(searchable_run("live"))
    first_call = next(i for i, e in enumerate(events) if getattr(e, "call_id", "") == "c1")
    run = FakeRun("live", EventBus())
    recorder = store.record(run)
    for event in events[: first_call + 1]:  # c1 has started: its prompt is written, no response
        run.bus.publish(event)
    recorder.flush()
    assert _queued(store) > 0
    assert [hit["place"] for hit in store.search("dingo")] == ["prompt · LLM call c1"]
    assert _queued(store) == 0
    assert store.search("echidna") == []
    for event in events[first_call + 1 :]:
        run.bus.publish(event)
    recorder.close()
    assert [hit["place"] for hit in store.search("echidna")] == ["response · LLM call c1"]
    assert [hit["place"] for hit in store.search("dingo")] == ["prompt · LLM call c1"]
    for index in INDEXES:
        store.db.execute(f"INSERT INTO {index} ({index}) VALUES ('integrity-check')")


def _queued(store: Store) -> int:
    return sum(
        store.db.execute(f"SELECT count(*) FROM {index}_pending").fetchone()[0]
        for index in INDEXES
        if index != "sessions_fts"
    )


@pytest.mark.parametrize("shape", ["timeout", "cancelled"])
def test_the_turn_a_run_ended_in_is_found_with_its_unfinished_code(
    real_sessions: tuple[Store, dict[str, str]], shape: str
) -> None:
    """A real run that hit its time limit, or was stopped, while a cell slept: the code of that
    turn, shown by the export, is found too."""
    store, ids = real_sessions
    (found,) = [s for s in store.search_sessions("Counting slowly", 10, 5) if s["id"] == ids[shape]]
    (hit,) = [hit for hit in found["hits"] if hit["field"] == "unfinished_reply"]
    assert hit["place"] == "reply (turn not finished) · root call · turn 1"
    assert "[Counting] [slowly]" in hit["snippet"]
    assert "unfinished_reply" in {hit["field"] for hit in store.search("sleep")}
