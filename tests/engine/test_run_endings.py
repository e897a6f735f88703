"""Every run ends with one `RunFinished`: provider quirks, a REPL that cannot start, an unexpected
exception and a cancellation during start-up all end the run with a status that tells the truth."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import Budget, ConfigError, ContextDocument, Run, RunConfig
from rlm_desktop.engine.events import (
    CallFinished,
    CallStarted,
    Event,
    LLMRetried,
    ModeChosen,
    RunFinished,
    RunStarted,
)
from rlm_desktop.engine.folders import EngineFolders
from rlm_desktop.store import Store
from tests.engine.scripting import (
    DOCUMENT,
    QUERY,
    TEST_MODEL,
    make_run,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import Reply, ScriptedServer

PAST_HTTP_DATE = "Wed, 21 Oct 2015 07:28:00 GMT"


def assert_one_ending(events: list[Event]) -> RunFinished:
    """The run opened with `RunStarted` and closed with exactly one `RunFinished`, last."""
    assert isinstance(events[0], RunStarted)
    (finished,) = of_type(events, RunFinished)
    assert events[-1] is finished
    return finished


@pytest.mark.parametrize(
    ("retry_after", "lowest", "highest"),
    [("soon", 0.25, 0.5), (PAST_HTTP_DATE, 0.0, 0.0)],
    ids=["not-a-number-or-date", "a-date-in-the-past"],
)
async def test_a_rate_limit_is_retried_whatever_its_retry_after_says(
    scripted_server: ScriptedServer, retry_after: str, lowest: float, highest: float
) -> None:
    scripted_server.enqueue(
        Reply(status=429, content="slow down", headers={"Retry-After": retry_after}),
        repl("FINAL('ok')"),
    )
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.answer) == ("completed", "ok")
    (retried,) = of_type(events, LLMRetried)
    assert "HTTP 429" in retried.reason
    assert lowest <= retried.delay_s <= highest  # backoff: the first ceiling is 0.5 s
    assert_one_ending(events)


async def test_a_refused_key_is_an_error_in_the_engines_words_with_its_status(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.enqueue(Reply(status=401, content="Incorrect API key provided"))
    result, events = await run_to_end(make_run(scripted_server))

    assert (result.status, result.http_status) == ("error", 401)
    assert result.error is not None
    assert result.error.startswith("HTTP 401: ")
    assert "Incorrect API key provided" in result.error
    assert result.error.endswith(" — check the API key")  # where to set it is the caller's to say
    finished = assert_one_ending(events)
    assert (finished.error, finished.http_status) == (result.error, 401)


async def test_a_run_out_of_turns_whose_request_for_a_last_answer_fails_ends_max_turns(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.enqueue(
        repl("x = 1"),
        repl("print(x)"),
        Reply(status=400, content="the request exceeds the available context size"),
    )
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(max_turns=2)))

    assert (result.status, result.http_status) == ("max_turns", 400)
    assert result.error == (
        "no answer within 2 turns, and asking for one failed: HTTP 400: the request exceeds the"
        " available context size"
    )
    assert len(scripted_server.chat_requests()) == 3
    root_id = of_type(events, CallStarted)[0].call_id
    (root,) = [e for e in of_type(events, CallFinished) if e.call_id == root_id]
    assert (root.status, root.error) == ("max_turns", result.error)
    finished = assert_one_ending(events)
    assert (finished.status, finished.error) == ("max_turns", result.error)


async def test_a_repl_that_cannot_start_ends_the_run_as_an_error(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.enqueue(repl("FINAL('never run')"))
    # too little for Python to start (the wasm sandbox refuses it before the run: its test)
    run = make_run(scripted_server, sandbox="kernel", memory_limit_mb=1)
    result, events = await run_to_end(run)

    assert result.status == "error"
    assert (result.error or "").startswith("the REPL could not be started: ")
    assert result.http_status is None
    (root,) = of_type(events, CallFinished)
    assert (root.status, root.error) == ("error", result.error)
    assert_one_ending(events)


async def test_an_unexpected_exception_ends_the_run_as_an_error(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """The engine is handed a scratch folder it cannot create (it lies below a file)."""
    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("not a folder", encoding="utf-8")
    folders = EngineFolders(scratch=in_the_way / "scratch", profiles=paths.profile_folders())
    config = RunConfig(query=QUERY, model=TEST_MODEL, api_base=scripted_server.base_url, mode="rlm")
    scripted_server.enqueue(repl("FINAL('never run')"))
    run = Run(config, [DOCUMENT], folders=folders)
    store = Store(paths.database_path())
    recorder = store.record(run, documents=[DOCUMENT])
    subscription = run.bus.subscribe()
    seen: list[Event] = []

    async def listen() -> None:
        seen.extend([event async for event in subscription])

    listening = asyncio.create_task(listen())
    result, events = await run_to_end(run)
    await asyncio.wait_for(listening, 5)  # the subscription ended with the run
    recorder.close()

    assert result.status == "error"
    assert (result.error or "").startswith("internal error: NotADirectoryError: ")
    assert "\n" not in (result.error or "")
    assert seen == events
    (root,) = of_type(events, CallFinished)
    assert (root.status, root.error) == ("error", result.error)
    assert assert_one_ending(events).error == result.error
    session = store.session(run.run_id)["session"]
    store.close()
    assert (session["status"], session["error"]) == ("error", result.error)


async def test_cancelling_during_start_up_still_ends_the_run(
    scripted_server: ScriptedServer,
) -> None:
    run = make_run(scripted_server)
    events: list[Event] = []
    run.bus.add_listener(events.append)
    task = asyncio.create_task(run.execute())
    await asyncio.sleep(0)  # the run is starting up: it has published nothing yet
    assert events == []
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert not of_type(events, ModeChosen)
    assert assert_one_ending(events).status == "cancelled"
    assert scripted_server.chat_requests() == []


async def test_documents_too_long_for_direct_mode_are_refused_before_anything_is_published(
    scripted_server: ScriptedServer,
) -> None:
    huge = ContextDocument(name="huge.txt", text="word " * 200_000)
    run = make_run(scripted_server, mode="direct", documents=[huge])
    events: list[Event] = []
    run.bus.add_listener(events.append)
    with pytest.raises(ConfigError) as refused:
        await run.execute()

    assert events == []
    assert refused.value.setting == "mode"
    assert str(refused.value).startswith("mode 'direct' cannot take these documents: ")
    assert refused.value.worded({"mode": "--mode"}).startswith("--mode 'direct' cannot take")


async def test_a_run_without_an_answer_says_its_text_is_the_model_s_draft_or_last_words(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.enqueue(
        "Thinking about it." + repl("answer['content'] = 'maybe 7'"),
        Reply(status=400, content="the request exceeds the available context size"),
    )
    drafted, _ = await run_to_end(make_run(scripted_server, budget=Budget(max_turns=1)))
    scripted_server.enqueue(
        "Thinking about it." + repl("x = 1"),
        Reply(status=400, content="the request exceeds the available context size"),
    )
    rambled, _ = await run_to_end(make_run(scripted_server, budget=Budget(max_turns=1)))
    scripted_server.enqueue(repl("FINAL('ok')"))
    answered, _ = await run_to_end(make_run(scripted_server))

    assert (drafted.status, drafted.answer_kind, drafted.answer) == (
        "max_turns",
        "draft",
        "maybe 7",
    )
    assert rambled.answer_kind == "last_reply"
    assert rambled.answer.startswith("Thinking about it.")
    assert (answered.answer_kind, answered.answer) == ("answer", "ok")


@pytest.mark.parametrize("max_turns", [1, 3])
async def test_a_run_out_of_turns_counts_them_in_words(
    scripted_server: ScriptedServer, max_turns: int
) -> None:
    scripted_server.respond_with(scripted(root=[repl("x = 1")] * max_turns + ["FINAL(1)"]))
    result, _events = await run_to_end(
        make_run(scripted_server, budget=Budget(max_turns=max_turns))
    )
    turns = "1 turn" if max_turns == 1 else f"{max_turns} turns"
    assert (result.status, result.error) == ("max_turns", f"no answer within {turns}")
    last_request = scripted_server.chat_requests()[-1]["messages"][-1]["content"]
    assert f"You have used all {turns}. Do not write more code." in last_request
