"""Stopping a run: `cancel()`, task cancellation and the wall-clock limit end it fast, workers gone."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncIterator

import pytest

from rlm_desktop.engine import Budget, Run, RunResult
from rlm_desktop.engine.events import CallFinished, CallStarted, Event, RunFinished
from rlm_desktop.engine.litellm_loader import load_litellm
from tests.engine.scripting import (
    ANNOUNCE_PID,
    QUERY,
    announced_pids,
    is_sub_call,
    live_descendants,
    make_run,
    new_descendants,
    of_type,
    repl,
    scripted,
    still_alive,
)
from tests.scripted_server import Reply, ScriptedServer


async def wait_until(condition: object, what: str, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def start(run: Run) -> tuple[asyncio.Task[RunResult], list[Event]]:
    events: list[Event] = []
    run.bus.add_listener(events.append)
    return asyncio.create_task(run.execute()), events


async def cancel_and_time(run: Run, task: asyncio.Task[RunResult]) -> tuple[RunResult, float]:
    started = time.monotonic()
    run.cancel()
    result = await asyncio.wait_for(task, 10)
    return result, time.monotonic() - started


def sleeping_run(server: ScriptedServer, timeout_s: float | None = Budget().timeout_s) -> Run:
    """A run whose first cell announces its worker's pid, then sleeps for a minute."""
    code = f"{ANNOUNCE_PID}\nimport time\ntime.sleep(60)"
    server.respond_with(scripted({QUERY: [repl(code)]}))
    return make_run(
        server, sandbox="kernel", budget=Budget(timeout_s=timeout_s, cell_timeout_s=120)
    )


async def start_sleeping(
    server: ScriptedServer,
) -> tuple[Run, asyncio.Task[RunResult], list[Event]]:
    """Start a `sleeping_run` and wait until its cell is running."""
    run = sleeping_run(server)
    task, events = start(run)
    await wait_until(lambda: len(announced_pids(server)) == 1, "the cell to start")
    return run, task, events


async def assert_no_workers_left(server: ScriptedServer, before: set[int]) -> None:
    """Every worker that announced its pid is gone, and no process started since `before` lives."""
    assert await still_alive(announced_pids(server)) == set()
    assert await new_descendants(before) == set()


def assert_finished_cancelled(events: list[Event]) -> None:
    """The last event published is the run finishing as cancelled."""
    assert isinstance(events[-1], RunFinished)
    assert events[-1].status == "cancelled"


async def test_cancel_during_a_sleeping_cell(scripted_server: ScriptedServer) -> None:
    before = live_descendants()
    run, task, events = await start_sleeping(scripted_server)
    await asyncio.sleep(0.2)
    result, elapsed = await cancel_and_time(run, task)

    assert result.status == "cancelled"
    assert elapsed < 1.0
    await assert_no_workers_left(scripted_server, before)
    assert_finished_cancelled(events)


async def test_cancel_during_a_sleeping_cell_in_either_sandbox(
    scripted_server: ScriptedServer, sandbox: str
) -> None:
    code = "llm_query('sleeping now')\nimport time\ntime.sleep(60)"
    scripted_server.respond_with(scripted({QUERY: [repl(code)]}, sub=lambda prompt: "noted"))
    before = live_descendants()
    run = make_run(scripted_server, sandbox=sandbox, budget=Budget(cell_timeout_s=120))
    task, events = start(run)
    await wait_until(lambda: any(map(is_sub_call, scripted_server.chat_requests())), "the cell")
    await asyncio.sleep(0.2)
    result, elapsed = await cancel_and_time(run, task)

    assert result.status == "cancelled"
    assert elapsed < 1.0
    assert await new_descendants(before) == set()
    assert_finished_cancelled(events)


async def test_cancel_during_a_fan_out_tree(scripted_server: ScriptedServer) -> None:
    root = [repl(f"{ANNOUNCE_PID}\nprint(rlm_query_batched(['child a', 'child b']))")]
    child = [repl(f"{ANNOUNCE_PID}\nprint(llm_query_batched([f'slow {{i}}' for i in range(60)]))")]
    slow = Reply(content="late", delay_s=10)
    scripted_server.respond_with(
        scripted(
            {QUERY: root, "child a": child, "child b": child},
            sub=lambda prompt: "noted" if prompt.startswith("pid ") else slow,
        )
    )
    before = live_descendants()
    run = make_run(scripted_server, sandbox="kernel", budget=Budget(max_depth=2, concurrency=64))
    task, events = start(run)
    await wait_until(lambda: len(announced_pids(scripted_server)) == 3, "root and children to run")
    await wait_until(  # answered, not only asked: under load a reply can still be on its way
        lambda: sum(e.status == "ok" for e in of_type(events, CallFinished)) == 3,
        "the three announcements answered",
    )
    await wait_until(
        lambda: sum(map(is_sub_call, scripted_server.chat_requests())) >= 20, "sub-calls in flight"
    )
    result, elapsed = await cancel_and_time(run, task)

    assert result.status == "cancelled"
    assert elapsed < 1.0
    await assert_no_workers_left(scripted_server, before)
    started = {e.call_id for e in of_type(events, CallStarted)}
    finished = {e.call_id: e.status for e in of_type(events, CallFinished)}
    assert set(finished) == started
    statuses = list(finished.values())
    assert statuses.count("ok") == 3  # the three workers' announcements of their pids
    assert set(statuses) == {"ok", "cancelled"}


async def test_cancel_before_execute(scripted_server: ScriptedServer) -> None:
    scripted_server.respond_with(scripted({QUERY: [repl("FINAL('too late')")]}))
    run = make_run(scripted_server)
    run.cancel()
    result = await asyncio.wait_for(run.execute(), 10)

    assert (result.status, result.answer) == ("cancelled", "")
    assert scripted_server.chat_requests() == []


async def test_cancelling_the_task_stops_the_tree(scripted_server: ScriptedServer) -> None:
    before = live_descendants()
    run, task, events = await start_sleeping(scripted_server)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)

    await assert_no_workers_left(scripted_server, before)
    assert_finished_cancelled(events)


@pytest.fixture
def litellm_loaded() -> None:
    """Import litellm before a run's clock starts: a cold import takes seconds (see test_cold_start)."""
    load_litellm()


@pytest.mark.usefixtures("litellm_loaded")
async def test_the_wall_clock_limit_ends_the_run(scripted_server: ScriptedServer) -> None:
    before = live_descendants()
    run = sleeping_run(scripted_server, timeout_s=1.5)
    result = await asyncio.wait_for(run.execute(), 10)

    assert result.status == "timeout"
    assert 1.5 <= result.wall_s < 3.0
    assert "1.5 s" in (result.error or "")
    await assert_no_workers_left(scripted_server, before)


@pytest.mark.usefixtures("litellm_loaded")
async def test_the_wall_clock_limit_keeps_the_draft_answer(
    scripted_server: ScriptedServer,
) -> None:
    turns = [
        repl("answer['content'] = 'draft before the limit'"),
        repl("import time\ntime.sleep(60)"),
    ]
    scripted_server.respond_with(scripted({QUERY: turns}))
    run = make_run(scripted_server, budget=Budget(timeout_s=1.0, cell_timeout_s=120))
    result = await asyncio.wait_for(run.execute(), 10)

    assert (result.status, result.answer) == ("timeout", "draft before the limit")


@pytest.fixture
async def loop_errors() -> AsyncIterator[list[str]]:
    """What the event loop's exception handler is told (e.g. 'Future exception was never retrieved')."""
    loop = asyncio.get_running_loop()
    found: list[str] = []
    loop.set_exception_handler(lambda _loop, context: found.append(str(context.get("message"))))
    yield found
    loop.set_exception_handler(None)


async def test_a_cancelled_run_leaves_no_unretrieved_errors_behind(
    scripted_server: ScriptedServer, loop_errors: list[str]
) -> None:
    run, task, _ = await start_sleeping(scripted_server)
    result, _ = await cancel_and_time(run, task)
    del run, task
    gc.collect()
    await asyncio.sleep(0.05)
    gc.collect()

    assert result.status == "cancelled"
    assert loop_errors == []


@pytest.mark.usefixtures("litellm_loaded")
async def test_the_wall_clock_limit_ends_every_call_it_stops_as_a_timeout(
    scripted_server: ScriptedServer,
) -> None:
    root = [repl("print(rlm_query_batched(['child a', 'child b']))")]
    child = [repl("print(llm_query_batched([f'slow {i}' for i in range(4)]))")]
    slow = Reply(content="late", delay_s=60)
    scripted_server.respond_with(
        scripted(
            {QUERY: root, "child a": child, "child b": child},
            sub=lambda prompt: "noted" if prompt.startswith("pid ") else slow,
        )
    )
    run = make_run(scripted_server, budget=Budget(max_depth=2, timeout_s=8.0))
    task, events = start(run)
    result = await asyncio.wait_for(task, 30)

    assert result.status == "timeout"
    finished = {e.call_id: (e.status, e.error) for e in of_type(events, CallFinished)}
    assert set(finished) == {e.call_id for e in of_type(events, CallStarted)}
    assert len(finished) == 1 + 2 + 8  # all started long before the limit
    assert set(finished.values()) == {("timeout", "the run passed its 8 s time limit")}
