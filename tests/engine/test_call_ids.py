"""Call ids: the calls of a run's tree are c1, c2, ... with no gaps, whatever else the run counts."""

from __future__ import annotations

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import CallFinished, CallStarted, LLMRequestSent
from tests.engine.scripting import QUERY, make_run, of_type, repl, run_to_end, scripted
from tests.scripted_server import ScriptedServer

CHILD = "How many lines mention amount 3?"


async def test_the_calls_of_a_run_are_numbered_without_gaps(
    scripted_server: ScriptedServer,
) -> None:
    """Every request of a call (each turn of the root and of a child, each sub-call) used to
    take a number from the calls' counter, so the tree read c1, c3, c5, ..."""
    root = [
        repl("print(llm_query_batched(['one', 'two', 'three']))"),
        repl(f"print(rlm_query({CHILD!r}, context=context[:300]))"),
        repl("print(llm_query('four'))"),
        repl("FINAL('done')"),
    ]
    child = [repl("print(llm_query('inner'))"), repl("FINAL('two lines')")]
    scripted_server.respond_with(scripted({QUERY: root, CHILD: child}))
    result, events = await run_to_end(make_run(scripted_server, budget=Budget(max_depth=2)))

    assert result.status == "completed"
    calls = [event.call_id for event in of_type(events, CallStarted)]
    assert calls == [f"c{n}" for n in range(1, 8)]
    assert {event.call_id for event in of_type(events, CallFinished)} == set(calls)
    requests = [event.request_id for event in of_type(events, LLMRequestSent)]
    assert sorted(requests, key=lambda r: int(r[1:])) == [f"r{n}" for n in range(1, 12)]
    assert {event.call_id for event in of_type(events, LLMRequestSent)} == set(calls)
