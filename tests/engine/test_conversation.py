"""Follow-up questions: each a run of its own that goes on in the REPL state of the ones before."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import ConfigError, ContextDocument, RunResult
from rlm_desktop.engine.conversation import (
    STATE_FILE,
    EarlierQuestion,
    Thread,
    follow_up_note,
    kept_folder,
)
from rlm_desktop.engine.events import CellExecuted, RunStarted
from rlm_desktop.engine.prompts import FRESH_START
from rlm_desktop.engine.sandbox.process import StateReport
from tests.engine.scripting import (
    DOCUMENT,
    QUERY,
    make_run,
    of_type,
    repl,
    rlm_requests,
    run_to_end,
    scripted,
)
from tests.scripted_server import ScriptedServer

FOLLOW_UP = "And what is twice the north total?"
FIRST_TURNS = [
    repl(
        "totals = {'north': 12, 'south': 30}\n"
        "def double(x):\n    return 2 * x\n"
        "pending = (n for n in range(3))\n"
        "FINAL('north 12, south 30')"
    )
]
NEW_DOCUMENT = ContextDocument(name="addendum.txt", text="addendum: north gets 5 more")


async def ask_first(server: ScriptedServer) -> RunResult:
    server.respond_with(scripted({QUERY: FIRST_TURNS}))
    result, _events = await run_to_end(make_run(server))
    assert result.status == "completed"
    return result


async def test_a_follow_up_sees_the_variables_and_answers_of_the_first_question(
    scripted_server: ScriptedServer,
) -> None:
    first = await ask_first(scripted_server)
    scripted_server.respond_with(
        scripted(
            {
                FOLLOW_UP: [
                    repl(
                        "print(sorted(SHOW_VARS()))\n"
                        "print(history_0[1]['content'].splitlines()[0])\n"
                        "FINAL(double(totals['north']))"
                    )
                ]
            }
        )
    )
    run = make_run(scripted_server, query=FOLLOW_UP, follows=first.session_id)
    result, events = await run_to_end(run)

    assert (result.status, result.answer) == ("completed", "24")
    shown = of_type(events, CellExecuted)[0].stdout.splitlines()
    assert shown == ["['double', 'totals']", f"Question: {QUERY}"]
    opening = rlm_requests(scripted_server, FOLLOW_UP)[0]["messages"][1]["content"]
    assert f"Q: {QUERY}" in opening
    assert "north 12, south 30" in opening
    assert "Your variables restored: double, totals." in opening
    assert "pending (cannot be kept (TypeError" in opening
    assert "You have not looked at `context`" not in opening
    assert opening.count("`history_0`") == 1
    assert "The earlier question already examined `context`" in opening
    settings = of_type(events, RunStarted)[0].settings
    assert (settings["follows"], settings["conversation_id"]) == (
        first.session_id,
        first.session_id,
    )


async def test_without_the_saved_state_the_documents_come_back_and_the_variables_are_named_gone(
    scripted_server: ScriptedServer,
) -> None:
    first = await ask_first(scripted_server)
    (kept_folder(paths.scratch_root(), first.session_id) / STATE_FILE).unlink()
    scripted_server.respond_with(
        scripted({FOLLOW_UP: [repl("print(len(context), 'totals' in globals())\nFINAL('again')")]})
    )
    run = make_run(scripted_server, query=FOLLOW_UP, follows=first.session_id)
    result, events = await run_to_end(run)

    assert result.status == "completed"
    assert of_type(events, CellExecuted)[0].stdout.split() == [str(len(DOCUMENT.text)), "False"]
    opening = rlm_requests(scripted_server, FOLLOW_UP)[0]["messages"][1]["content"]
    assert "Your variables could not be restored" in opening
    assert "Restored: `history_0`, its full messages" in opening
    assert "gone: double, totals, pending" in opening


async def test_documents_added_between_questions_are_new_contexts(
    scripted_server: ScriptedServer,
) -> None:
    first = await ask_first(scripted_server)
    third = "And the addendum?"
    scripted_server.respond_with(
        scripted(
            {
                FOLLOW_UP: [
                    repl(
                        "print(context is context_0, type(context).__name__, context_1)\n"
                        "FINAL(totals['north'] + 5)"
                    )
                ],
                third: [repl("print(type(context_1).__name__, len(history_1) > 0)\nFINAL('ok')")],
            }
        )
    )
    second, events = await run_to_end(
        make_run(
            scripted_server,
            query=FOLLOW_UP,
            documents=(DOCUMENT, NEW_DOCUMENT),
            follows=first.session_id,
        )
    )
    assert (second.status, second.answer) == ("completed", "17")
    shown = of_type(events, CellExecuted)[0].stdout.strip()
    assert shown == "True str addendum: north gets 5 more"
    opening = rlm_requests(scripted_server, FOLLOW_UP)[0]["messages"][1]["content"]
    assert "New for this question: `context_1` (addendum.txt)." in opening
    assert opening.count("`context_1`") == 1

    last, events = await run_to_end(
        make_run(
            scripted_server,
            query=third,
            documents=(DOCUMENT, NEW_DOCUMENT),
            follows=second.session_id,
        )
    )
    assert last.status == "completed"
    assert of_type(events, CellExecuted)[0].stdout.split() == ["str", "True"]
    opening = rlm_requests(scripted_server, third)[0]["messages"][1]["content"]
    assert "follows 2 earlier questions" in opening
    assert "Restored: `history_0` and `history_1`, their full messages" in opening
    assert "`context_1` hold those added by earlier questions" in opening
    assert "New for this question" not in opening
    assert "You have not looked at `context`" not in opening
    settings = of_type(events, RunStarted)[0].settings
    assert settings["conversation_id"] == first.session_id


async def test_a_fresh_question_is_told_it_has_not_looked_at_context_yet(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(scripted({QUERY: FIRST_TURNS}))
    await run_to_end(make_run(scripted_server))
    opening = rlm_requests(scripted_server, QUERY)[0]["messages"][1]["content"]
    assert opening.endswith(FRESH_START)
    assert "history_0" not in opening


def test_the_earlier_questions_histories_are_named_once_as_a_range() -> None:
    earlier = tuple(
        EarlierQuestion(f"s{n}", f"question {n}?", "yes", "completed") for n in range(3)
    )
    thread = Thread(earlier, ([], [], []), None, StateReport(kept=("totals",)))
    note = follow_up_note(thread, StateReport(kept=("totals",)), ("new.txt",), (1, 1, 1, 1))

    assert "Restored: `history_0` ... `history_2`, their full messages" in note
    assert note.count("`history_") == 2
    assert "`context_1` and `context_2` hold those added by earlier questions" in note
    assert "New for this question: `context_3` (new.txt)." in note
    assert "The earlier questions already examined `context`" in note


def test_a_follow_up_of_a_question_that_kept_nothing_is_refused(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="kept no conversation state"):
        make_run(scripted_server, query=FOLLOW_UP, follows="20260101-000000-abcdef")
