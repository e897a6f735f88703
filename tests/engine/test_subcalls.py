"""`llm_query` and `llm_query_batched`: models, input order, and the concurrency limit."""

from __future__ import annotations

from rlm_desktop.engine import Budget
from rlm_desktop.engine.events import CallStarted
from tests.engine.scripting import (
    QUERY,
    TEST_MODEL,
    is_sub_call,
    make_run,
    observation_after,
    of_type,
    repl,
    run_to_end,
    scripted,
)
from tests.scripted_server import Reply, ScriptedServer

COUNT = 30


def echo_in_reverse_time(prompt: str) -> Reply:
    """Later prompts answer sooner, so replies arrive out of input order."""
    index = int(prompt.split()[-1])
    return Reply(content=f"echo {index}", delay_s=(COUNT - index) * 0.004)


async def test_batched_replies_come_back_in_input_order_within_the_limit(
    scripted_server: ScriptedServer,
) -> None:
    code = f"replies = llm_query_batched([f'item {{i}}' for i in range({COUNT})])\nprint(replies)"
    scripted_server.respond_with(
        scripted({QUERY: [repl(code), repl("FINAL('ok')")]}, sub=echo_in_reverse_time)
    )
    run = make_run(scripted_server, budget=Budget(concurrency=4))
    result, events = await run_to_end(run)

    assert str([f"echo {i}" for i in range(COUNT)]) in observation_after(scripted_server, 0)
    assert scripted_server.max_in_flight <= 4
    assert result.sub_calls == COUNT
    subs = [e for e in of_type(events, CallStarted) if e.kind == "llm"]
    assert len(subs) == COUNT
    assert {e.depth for e in subs} == {2}


async def test_sub_calls_use_the_sub_model_unless_the_code_names_one(
    scripted_server: ScriptedServer,
) -> None:
    code = "print(llm_query('plain'))\nprint(llm_query('named', model='openai/named-model'))"
    scripted_server.respond_with(scripted({QUERY: [repl(code), repl("FINAL('ok')")]}))
    run = make_run(scripted_server, sub_model="openai/small-model")
    await run_to_end(run)

    models = {
        r["messages"][0]["content"]: r["model"]
        for r in scripted_server.chat_requests()
        if is_sub_call(r)
    }
    assert models == {"plain": "small-model", "named": "named-model"}
    roots = {r["model"] for r in scripted_server.chat_requests() if not is_sub_call(r)}
    assert roots == {TEST_MODEL.split("/", 1)[1]}


async def test_sub_calls_from_threads_in_model_code_each_get_their_own_reply(
    scripted_server: ScriptedServer,
) -> None:
    code = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "with ThreadPoolExecutor(8) as pool:\n"
        "    replies = list(pool.map(llm_query, [f'item {i}' for i in range(16)]))\n"
        "print(replies)"
    )
    scripted_server.respond_with(
        scripted({QUERY: [repl(code), repl("FINAL('ok')")]}, sub=echo_in_reverse_time)
    )
    result, events = await run_to_end(make_run(scripted_server, sandbox="kernel"))

    assert result.status == "completed"
    assert str([f"echo {i}" for i in range(16)]) in observation_after(scripted_server, 0)
    assert len([e for e in of_type(events, CallStarted) if e.kind == "llm"]) == 16
