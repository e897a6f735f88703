"""Recursive calls: children with their own REPL, the depth limit, and children that fail."""

from __future__ import annotations

import re

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import CallFinished, CallStarted, CellExecuted
from tests.engine.scripting import (
    HOST_PID,
    QUERY,
    is_sub_call,
    make_run,
    observation_after,
    of_type,
    repl,
    rlm_requests,
    run_to_end,
    scripted,
    still_alive,
)
from tests.scripted_server import Reply, ScriptedServer, last_user_text

CHILD = "How many lines mention amount 3?"
DOOMED = "doomed question"


def pid_of(events: list[CellExecuted], call_id: str) -> int:
    text = "".join(cell.stdout for cell in events if cell.call_id == call_id)
    return int(re.findall(r"pid (\d+)", text)[0])


async def test_a_depth_two_child_has_its_own_repl(scripted_server: ScriptedServer) -> None:
    root = [
        repl(
            f"import os\nprint('pid', {HOST_PID})\n"
            f"reply = rlm_query({CHILD!r}, context=context[:400])\nprint('child said', reply)"
        ),
        repl("FINAL(reply)"),
    ]
    child = [
        repl(f"import os\nprint('pid', {HOST_PID})\nprint('chars', len(context))"),
        repl("FINAL('child answer: 2')"),
    ]
    scripted_server.respond_with(scripted({QUERY: root, CHILD: child}))
    run = make_run(scripted_server, sandbox="kernel", budget=Budget(max_depth=2))
    result, events = await run_to_end(run)

    assert (result.status, result.answer) == ("completed", "child answer: 2")
    assert (result.max_depth_reached, result.sub_calls) == (2, 1)
    top, below = of_type(events, CallStarted)
    assert (top.kind, top.depth, top.parent_id) == ("rlm", 1, None)
    assert (below.kind, below.depth, below.parent_id, below.prompt) == (
        "rlm",
        2,
        top.call_id,
        CHILD,
    )
    finished = {e.call_id: e for e in of_type(events, CallFinished)}
    assert (finished[below.call_id].status, finished[below.call_id].response) == (
        "ok",
        "child answer: 2",
    )
    cells = of_type(events, CellExecuted)
    root_pid, child_pid = pid_of(cells, top.call_id), pid_of(cells, below.call_id)
    assert root_pid != child_pid
    assert await still_alive([root_pid, child_pid]) == set()
    assert "chars 400" in observation_after(scripted_server, 0, CHILD)
    assert "a str of 400 characters" in last_user_text(rlm_requests(scripted_server, CHILD)[0])
    assert "child said child answer: 2" in observation_after(scripted_server, 0)


async def test_batched_children_answer_in_input_order(scripted_server: ScriptedServer) -> None:
    root = [
        repl("print(rlm_query_batched(['first', 'second'], contexts=['aa', 'bbbb']))"),
        repl("print(rlm_query('only a prompt'))"),
        repl("FINAL('ok')"),
    ]
    child = [repl("FINAL(len(context))")]
    scripted_server.respond_with(
        scripted({QUERY: root, "first": child, "second": child, "only a prompt": child})
    )
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(max_depth=2)))

    assert "['2', '4']" in observation_after(scripted_server, 0)
    assert str(len("only a prompt")) in observation_after(scripted_server, 1)
    depths = [(e.kind, e.depth) for e in of_type(events, CallStarted)]
    assert depths == [("rlm", 1), ("rlm", 2), ("rlm", 2), ("rlm", 2)]
    assert (result.status, result.sub_calls) == ("completed", 3)


async def test_at_max_depth_one_rlm_query_is_a_plain_call(scripted_server: ScriptedServer) -> None:
    root = [
        repl("r = rlm_query('Summarise this', context='tiny context')\nprint('got', r)"),
        repl("FINAL(r)"),
    ]
    scripted_server.respond_with(scripted({QUERY: root}, sub="plain answer"))
    run = make_run(scripted_server, budget=Budget(max_depth=1))
    result, events = await run_to_end(run)

    assert (result.status, result.answer, result.max_depth_reached) == (
        "completed",
        "plain answer",
        1,
    )
    assert [(e.kind, e.depth) for e in of_type(events, CallStarted)] == [("rlm", 1), ("llm", 2)]
    (sub,) = [r for r in scripted_server.chat_requests() if is_sub_call(r)]
    assert "Summarise this" in last_user_text(sub)
    assert "tiny context" in last_user_text(sub)
    assert not rlm_requests(scripted_server, "Summarise this")
    assert result.sub_calls == 1


async def test_a_failing_child_raises_rlm_child_error_in_the_parent(
    scripted_server: ScriptedServer,
) -> None:
    code = (
        "try:\n"
        f"    rlm_query({DOOMED!r}, context='abc')\n"
        "except RLMChildError as error:\n"
        "    print('caught', type(error).__name__, isinstance(error, LLMCallError))\n"
        "    print('message', error)"
    )
    root = [repl(code), repl("FINAL('recovered')")]
    doomed = [Reply(status=400, content="the child's request is malformed")]
    scripted_server.respond_with(scripted({QUERY: root, DOOMED: doomed}))
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(max_depth=2)))

    shown = observation_after(scripted_server, 0)
    assert "caught RLMChildError True" in shown
    assert "400" in shown
    assert "malformed" in shown
    child = next(e for e in of_type(events, CallStarted) if e.depth == 2)
    finished = {e.call_id: e for e in of_type(events, CallFinished)}
    assert finished[child.call_id].status == "error"
    assert len(rlm_requests(scripted_server, DOOMED)) == 1
    assert (result.status, result.answer) == ("completed", "recovered")


async def test_a_failing_batched_child_keeps_the_other_answers(
    scripted_server: ScriptedServer,
) -> None:
    code = (
        "try:\n"
        f"    rlm_query_batched(['fine', {DOOMED!r}])\n"
        "except RLMChildError as error:\n"
        "    print('partial', error.results)"
    )
    root = [repl(code), repl("FINAL('ok')")]
    doomed = [Reply(status=400, content="malformed")]
    fine = [repl("FINAL('fine answer')")]
    scripted_server.respond_with(scripted({QUERY: root, DOOMED: doomed, "fine": fine}))
    result, _ = await run_to_end(make_run(scripted_server, budget=Budget(max_depth=2)))

    assert "partial ['fine answer', None]" in observation_after(scripted_server, 0)
    assert result.status == "completed"
