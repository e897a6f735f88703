"""`auto`, `direct` and `rlm` modes: short inputs get one direct call, long ones an RLM run."""

from __future__ import annotations

import pytest

from rlm_desktop.engine import ConfigError, ContextDocument
from rlm_desktop.engine.events import AnswerSubmitted, CallStarted, ModeChosen
from tests.engine.scripting import (
    DOCUMENT,
    QUERY,
    make_run,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import ScriptedServer, last_user_text, system_text


async def test_auto_answers_a_short_input_with_one_direct_call(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.enqueue("The total is 900.")
    result, events = await run_to_end(make_run(scripted_server, mode="auto"))

    (request,) = scripted_server.chat_requests()
    assert DOCUMENT.text in last_user_text(request)
    assert QUERY in last_user_text(request)
    assert "llm_query" not in system_text(request)
    assert of_type(events, ModeChosen)[0].mode == "direct"
    assert [(e.kind, e.depth) for e in of_type(events, CallStarted)] == [("llm", 1)]
    assert of_type(events, AnswerSubmitted)[0].source == "direct"
    assert (result.status, result.answer, result.sub_calls) == ("completed", "The total is 900.", 0)


async def test_auto_orchestrates_an_input_past_the_direct_threshold(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL(len(context))")]}))
    run = make_run(scripted_server, mode="auto", auto_direct_max_tokens=100)
    result, events = await run_to_end(run)

    assert of_type(events, ModeChosen)[0].mode == "rlm"
    assert (result.status, result.answer) == ("completed", str(len(DOCUMENT.text)))
    assert DOCUMENT.text not in repr(scripted_server.chat_requests())


async def test_direct_mode_refuses_documents_that_do_not_fit(
    scripted_server: ScriptedServer,
) -> None:
    huge = ContextDocument(name="huge.txt", text="word " * 200_000)
    run = make_run(scripted_server, mode="direct", documents=[huge])
    with pytest.raises(ConfigError, match="do not fit"):
        await run.execute()
    assert scripted_server.chat_requests() == []
